// A small Markdown renderer for model text. Model text is untrusted: every
// character of it is HTML-escaped before any markup is added, and the only
// tags this module emits are fixed strings (p, br, pre, code, h1-h6, ul, ol,
// li, blockquote, hr, strong, em, del, a, table, thead, tbody, tr, th, td,
// and highlight.js's token spans). Link targets pass a scheme allow-list, so
// the HTML it returns is safe to assign to innerHTML.

import { highlight } from './highlight.js';

const ESC = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** escapeHTML makes s inert as HTML text or as a quoted attribute value. */
export function escapeHTML(s) {
  return String(s).replace(/[&<>"']/g, (c) => ESC[c]);
}

const UNESC = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" };

function unescapeHTML(s) {
  return s.replace(/&(?:amp|lt|gt|quot|#39);/g, (e) => UNESC[e]);
}

/**
 * safeURL returns the escaped URL when its scheme is http, https or mailto,
 * or when it is relative (no scheme at all); otherwise "".
 * @param {string} escaped a URL that has already been through escapeHTML
 */
export function safeURL(escaped) {
  const raw = unescapeHTML(escaped).trim();
  // Browsers drop tabs and newlines inside a scheme and ignore leading
  // control characters, so judge the URL the way they will read it.
  const probe = raw.replace(/[\u0000-\u0020]/g, '');
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(probe);
  if (scheme) {
    return /^(https?|mailto)$/i.test(scheme[1]) ? escaped : '';
  }
  if (probe.startsWith('//') || probe.startsWith('\\')) return escaped;
  return probe === '' ? '' : escaped;
}

// Placeholders protect finished spans (code, links) from later inline
// rules. Model text cannot forge one: NUL is replaced before parsing.
const PH = '\u0000';

function inline(text) {
  const saved = [];
  const keep = (html) => PH + (saved.push(html) - 1) + PH;
  let s = text;
  // Code spans first, on the raw text, so their contents stay literal.
  s = s.replace(/(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/g, (_, _ticks, code) => keep('<code>' + escapeHTML(code.replace(/^ (.*) $/, '$1')) + '</code>'));
  s = escapeHTML(s);
  // Links and images ([text](url), ![alt](url)); images become links, as
  // the page never loads remote content.
  s = s.replace(/!?\[([^\]\n]+)\]\(\s*([^\s)]+)(?:\s+&quot;[^\n]*?&quot;)?\s*\)/g, (m, label, url) => {
    const href = safeURL(url);
    if (!href) return keep(emphasis(label));
    return keep('<a href="' + href + '" rel="noopener noreferrer" target="_blank">' + emphasis(label) + '</a>');
  });
  // Bare http(s) URLs.
  s = s.replace(/\bhttps?:\/\/[^\s<>"'`\u0000]+[^\s<>"'`.,;:!?)\]\u0000]/g, (url) => keep('<a href="' + url + '" rel="noopener noreferrer" target="_blank">' + url + '</a>'));
  s = emphasis(s);
  return s.replace(/\u0000(\d+)\u0000/g, (_, i) => saved[Number(i)]);
}

function emphasis(s) {
  return s
    .replace(/\*\*(?=\S)([\s\S]*?\S)\*\*/g, '<strong>$1</strong>')
    .replace(/(^|[^\w])__(?=\S)([\s\S]*?\S)__(?!\w)/g, '$1<strong>$2</strong>')
    .replace(/\*(?=[^\s*])([^*]*?[^\s*])\*/g, '<em>$1</em>')
    .replace(/\*(?=[^\s*])([^*])\*/g, '<em>$1</em>')
    .replace(/(^|[^\w])_(?=[^\s_])([^_]*?[^\s_]|[^\s_])_(?!\w)/g, '$1<em>$2</em>')
    .replace(/~~(?=\S)([\s\S]*?\S)~~/g, '<del>$1</del>');
}

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([\w+#.-]*)/;
const HEADING = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const RULE = /^ {0,3}([-*_])(\s*\1){2,}\s*$/;
const QUOTE = /^ {0,3}>/;
const ITEM = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;

// closes reports whether line ends a fence opened with fence: the same
// character, at least as many of it, nothing else.
function closes(line, fence) {
  const m = /^ {0,3}(`{3,}|~{3,})\s*$/.exec(line);
  return m !== null && m[1][0] === fence[0] && m[1].length >= fence.length;
}

function indentOf(line) {
  return line.match(/^\s*/)[0].replace(/\t/g, '    ').length;
}

// maxDepth bounds how deep quotes and lists nest; deeper markers stay text,
// so hostile input cannot exhaust the stack.
const maxDepth = 12;

// A table is a header row, a delimiter row (---, :--, --:, :-:) with as
// many cells, and the rows up to a blank line (GitHub's tables).
const DELIM = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;

// cells splits a table row on the pipes that are not escaped.
function cells(row) {
  let r = row.trim();
  if (r.startsWith('|')) r = r.slice(1);
  if (r.endsWith('|') && !r.endsWith('\\|')) r = r.slice(0, -1);
  return r.split(/(?<!\\)\|/).map((c) => c.trim().replace(/\\\|/g, '|'));
}

function blocks(lines, depth = 0) {
  const out = [];
  let para = [];
  const flush = () => {
    if (para.length) out.push('<p>' + para.map(inline).join('<br>') + '</p>');
    para = [];
  };
  for (let i = 0; i < lines.length; ) {
    const line = lines[i];
    let m;
    if ((m = FENCE.exec(line))) {
      flush();
      const fence = m[1];
      const lang = m[2].replace(/[^\w+#.-]/g, '');
      const body = [];
      i++;
      // An unclosed fence runs to the end: while a reply streams, the
      // closing fence has simply not arrived yet.
      while (i < lines.length && !closes(lines[i], fence)) {
        body.push(lines[i]);
        i++;
      }
      i++;
      const cls = lang ? ' class="lang-' + escapeHTML(lang) + '"' : '';
      out.push('<pre><code' + cls + '>' + highlight(body.join('\n'), lang) + '</code></pre>');
      continue;
    }
    if (line.trim() === '') {
      flush();
      i++;
      continue;
    }
    if ((m = HEADING.exec(line))) {
      flush();
      const n = m[1].length;
      out.push('<h' + n + '>' + inline(m[2]) + '</h' + n + '>');
      i++;
      continue;
    }
    if (i + 1 < lines.length && line.includes('|') && DELIM.test(lines[i + 1])) {
      const head = cells(line);
      const aligns = cells(lines[i + 1]).map((c) => (/^:-+:$/.test(c) ? 'center' : /^-+:$/.test(c) ? 'right' : /^:-+$/.test(c) ? 'left' : ''));
      if (aligns.length === head.length) {
        flush();
        const td = (tag, c, k) => '<' + tag + (aligns[k] ? ' class="al-' + aligns[k] + '"' : '') + '>' + inline(c) + '</' + tag + '>';
        let html = '<table><thead><tr>' + head.map((c, k) => td('th', c, k)).join('') + '</tr></thead><tbody>';
        i += 2;
        while (i < lines.length && lines[i].trim() !== '' && lines[i].includes('|')) {
          const row = cells(lines[i]);
          html += '<tr>' + head.map((_, k) => td('td', row[k] || '', k)).join('') + '</tr>';
          i++;
        }
        out.push(html + '</tbody></table>');
        continue;
      }
    }
    if (RULE.test(line)) {
      flush();
      out.push('<hr>');
      i++;
      continue;
    }
    if (QUOTE.test(line) && depth < maxDepth) {
      flush();
      const inner = [];
      while (i < lines.length && QUOTE.test(lines[i])) {
        inner.push(lines[i].replace(/^ {0,3}>\s?/, ''));
        i++;
      }
      out.push('<blockquote>' + blocks(inner, depth + 1) + '</blockquote>');
      continue;
    }
    if (depth < maxDepth && (m = ITEM.exec(line))) {
      flush();
      i = list(lines, i, out, depth);
      continue;
    }
    para.push(line);
    i++;
  }
  flush();
  return out.join('');
}

// list renders the list that starts at lines[start] and returns the index
// of the first line after it. Items at the list's own indentation start new
// <li>s; deeper lines belong to the item above (nested lists, wrapped text).
function list(lines, start, out, depth) {
  const first = ITEM.exec(lines[start]);
  const base = indentOf(lines[start]);
  const ordered = /\d/.test(first[2]);
  const items = [];
  // Continuation lines lose up to the item's content indentation.
  let strip = base + first[2].length + 1;
  const dedent = (line) => line.replace(new RegExp('^ {0,' + strip + '}'), '');
  let i = start;
  while (i < lines.length) {
    const line = lines[i];
    const m = ITEM.exec(line);
    if (m && indentOf(line) <= base + 1) {
      if (/\d/.test(m[2]) !== ordered) break;
      items.push([m[3]]);
      strip = indentOf(line) + m[2].length + 1;
      i++;
      continue;
    }
    if (line.trim() === '') {
      // A blank line ends the list unless the next line continues it.
      const next = lines[i + 1];
      if (next === undefined || (indentOf(next) <= base && !ITEM.exec(next))) break;
      items[items.length - 1].push('');
      i++;
      continue;
    }
    if (indentOf(line) > base) {
      items[items.length - 1].push(dedent(line.replace(/\t/g, '    ')));
      i++;
      continue;
    }
    if (m || FENCE.test(line) || HEADING.test(line) || QUOTE.test(line) || RULE.test(line)) break;
    // A lazy continuation line: plain text right under an item.
    items[items.length - 1].push(line);
    i++;
  }
  const startAt = ordered ? parseInt(first[2], 10) : 1;
  const open = ordered ? (startAt !== 1 ? '<ol start="' + startAt + '">' : '<ol>') : '<ul>';
  out.push(open);
  for (const body of items) {
    let html = blocks(body, depth + 1);
    // A tight item is one paragraph: drop its <p> so lists stay compact.
    const tight = html.match(/^<p>([\s\S]*?)<\/p>([\s\S]*)$/);
    if (tight && !tight[1].includes('<p>')) html = tight[1] + tight[2];
    out.push('<li>' + html + '</li>');
  }
  out.push(ordered ? '</ol>' : '</ul>');
  return i;
}

/**
 * renderMarkdown turns model text into HTML that is safe to assign to
 * innerHTML: everything the model wrote arrives escaped.
 * @param {string} src
 * @returns {string}
 */
export function renderMarkdown(src) {
  const text = String(src ?? '').replace(/\u0000/g, '\uFFFD').replace(/\r\n?/g, '\n');
  return blocks(text.split('\n'));
}
