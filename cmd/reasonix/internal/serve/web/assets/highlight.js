// Code highlighting for fenced blocks. The code is model text, so it is
// untrusted: it is cut into tokens by one scanner per language and every
// token is HTML-escaped; the only markup added is <span class="tok-…">
// with a fixed class name. Colours come from the stylesheet (the page's
// CSP allows no inline style). A language it does not know stays plain.

// markdown.js imports this module too; the cycle is safe because neither
// calls the other while it loads.
import { escapeHTML } from './markdown.js';

const words = (s) => new Set(s.split(' '));

// C-like languages share a scanner: // and /* */ comments, quoted strings,
// numbers and the language's keywords.
const C_LIKE = {
  comment: String.raw`\/\/[^\n]*|\/\*[\s\S]*?(?:\*\/|$)`,
  string: String.raw`"(?:[^"\\\n]|\\.)*"?|'(?:[^'\\\n]|\\.)*'?|` + '`[^`]*`?',
};
// Hash-comment languages: # comments and quoted strings.
const HASH = {
  comment: String.raw`#[^\n]*`,
  string: String.raw`"(?:[^"\\]|\\.)*"?|'[^']*'?`,
};

const LANGS = {
  go: { ...C_LIKE, keywords: words('break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var nil true false iota') },
  js: { ...C_LIKE, keywords: words('async await break case catch class const continue debugger default delete do else export extends false finally for function if import in instanceof let new null of return static super switch this throw true try typeof undefined var void while with yield') },
  ts: { ...C_LIKE, keywords: words('abstract any as async await boolean break case catch class const continue declare default do else enum export extends false finally for from function if implements import in infer instanceof interface keyof let module namespace never new null number of private protected public readonly return static string super switch this throw true try type typeof undefined unknown var void while yield') },
  rust: { ...C_LIKE, keywords: words('as async await break const continue crate dyn else enum extern false fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait true type unsafe use where while Some None Ok Err') },
  c: { ...C_LIKE, keywords: words('auto break case char const continue default do double else enum extern float for goto if inline int long register return short signed sizeof static struct switch typedef union unsigned void volatile while NULL true false bool class namespace template typename public private protected virtual new delete this nullptr') },
  java: { ...C_LIKE, keywords: words('abstract boolean break byte case catch char class const continue default do double else enum extends false final finally float for if implements import instanceof int interface long new null package private protected public return short static super switch synchronized this throw throws true try void volatile while var fun val when object') },
  python: { ...HASH, string: String.raw`"""[\s\S]*?(?:"""|$)|'''[\s\S]*?(?:'''|$)|` + HASH.string, keywords: words('and as assert async await break class continue def del elif else except False finally for from global if import in is lambda None nonlocal not or pass raise return True try while with yield self') },
  sh: { ...HASH, keywords: words('if then else elif fi for while until do done case esac in function return local export readonly set unset shift exit echo cd source') },
  ruby: { ...HASH, keywords: words('begin break case class def defined do else elsif end ensure false for if in module next nil not or redo rescue retry return self super then true undef unless until when while yield require') },
  toml: { ...HASH, keywords: words('true false') },
  yaml: { ...HASH, keywords: words('true false null yes no on off') },
  json: { comment: '(?!)', string: String.raw`"(?:[^"\\\n]|\\.)*"?`, keywords: words('true false null') },
  sql: { comment: String.raw`--[^\n]*|\/\*[\s\S]*?(?:\*\/|$)`, string: String.raw`'(?:[^']|'')*'?`, keywords: words('select from where insert into values update set delete create table index drop alter add join left right inner outer on as and or not null is in by group order having limit offset primary key references distinct union all case when then else end SELECT FROM WHERE INSERT INTO VALUES UPDATE SET DELETE CREATE TABLE INDEX DROP ALTER ADD JOIN LEFT RIGHT INNER OUTER ON AS AND OR NOT NULL IS IN BY GROUP ORDER HAVING LIMIT OFFSET PRIMARY KEY REFERENCES DISTINCT UNION ALL CASE WHEN THEN ELSE END') },
};

const ALIASES = {
  golang: 'go', javascript: 'js', jsx: 'js', mjs: 'js', node: 'js', typescript: 'ts', tsx: 'ts',
  rs: 'rust', h: 'c', cpp: 'c', 'c++': 'c', cc: 'c', hpp: 'c', cxx: 'c', 'c#': 'java', csharp: 'java', cs: 'java',
  kotlin: 'java', kt: 'java', swift: 'java', scala: 'java', py: 'python', python3: 'python',
  bash: 'sh', shell: 'sh', zsh: 'sh', console: 'sh', shellscript: 'sh', rb: 'ruby', yml: 'yaml', jsonc: 'json',
};

const NUMBER = String.raw`\b(?:0[xX][\da-fA-F_]+|0[bB][01_]+|\d[\d_]*(?:\.\d[\d_]*)?(?:[eE][+-]?\d+)?)\b`;
const WORD = String.raw`[A-Za-z_$][\w$]*`;

// One compiled scanner per language, built on first use.
const scanners = new Map();

function scanner(lang) {
  let re = scanners.get(lang);
  if (!re) {
    const l = LANGS[lang];
    re = new RegExp('(' + l.comment + ')|(' + l.string + ')|(' + NUMBER + ')|(' + WORD + ')', 'g');
    scanners.set(lang, re);
  }
  return re;
}

/** language maps a fence's info word to a known language, or "". */
export function language(info) {
  const l = String(info || '').toLowerCase();
  if (LANGS[l]) return l;
  return ALIASES[l] || (l === 'diff' || l === 'patch' ? 'diff' : '');
}

/**
 * highlight returns code as safe HTML: escaped text with token spans
 * (tok-c comment, tok-s string, tok-n number, tok-k keyword; tok-add and
 * tok-del lines of a diff), or only escaped text for an unknown language.
 */
export function highlight(code, info) {
  const lang = language(info);
  if (!lang) return escapeHTML(code);
  if (lang === 'diff') return highlightDiff(code);
  const keywords = LANGS[lang].keywords;
  const re = scanner(lang);
  re.lastIndex = 0;
  let out = '';
  let at = 0;
  for (let m; (m = re.exec(code)); ) {
    if (m[0] === '') {
      re.lastIndex++;
      continue;
    }
    let cls = '';
    if (m[1] !== undefined) cls = 'tok-c';
    else if (m[2] !== undefined) cls = 'tok-s';
    else if (m[3] !== undefined) cls = 'tok-n';
    else if (keywords.has(m[4])) cls = 'tok-k';
    if (!cls) continue; // a plain word stays in the text run
    out += escapeHTML(code.slice(at, m.index)) + '<span class="' + cls + '">' + escapeHTML(m[0]) + '</span>';
    at = m.index + m[0].length;
  }
  return out + escapeHTML(code.slice(at));
}

function highlightDiff(code) {
  return code.split('\n').map((line) => {
    const cls = line.startsWith('+++') || line.startsWith('---') || line.startsWith('@@') ? 'tok-c'
      : line.startsWith('+') ? 'tok-add' : line.startsWith('-') ? 'tok-del' : '';
    return cls ? '<span class="' + cls + '">' + escapeHTML(line) + '</span>' : escapeHTML(line);
  }).join('\n');
}
