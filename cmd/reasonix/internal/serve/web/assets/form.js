// An MCP elicitation's form, read from the request's schema with the
// chat's rules (tui/panel/form.go): the same fields in the same order,
// the same types and the same answer. It only describes and collects;
// app.js draws the inputs and sends the answer.

/**
 * formFields lists the fields of a requested schema (an object or its JSON
 * text): the required ones in the order of the required list, then the
 * rest by name. Each is {name, title, desc, kind, required, options,
 * labels, def, format, min, max}, kind one of string, number, integer,
 * boolean, enum (one of options) or multi (any of options).
 */
export function formFields(schema) {
  if (typeof schema === 'string') {
    try {
      schema = JSON.parse(schema);
    } catch {
      return [];
    }
  }
  if (!schema || typeof schema !== 'object' || !schema.properties || typeof schema.properties !== 'object') return [];
  const required = Array.isArray(schema.required) ? schema.required : [];
  const names = Object.keys(schema.properties).sort((a, b) => {
    const ra = required.indexOf(a), rb = required.indexOf(b);
    if ((ra >= 0) !== (rb >= 0)) return ra >= 0 ? -1 : 1;
    if (ra >= 0) return ra - rb;
    return a < b ? -1 : a > b ? 1 : 0;
  });
  return names.map((name) => field(name, schema.properties[name] || {}, required.includes(name)));
}

function field(name, p, required) {
  const f = {
    name, title: str(p.title) || name, desc: str(p.description), kind: str(p.type) || 'string', required,
    options: [], labels: [], def: p.default, format: str(p.format), min: num(p.minimum), max: num(p.maximum),
  };
  const titled = (list) => {
    for (const o of list) if (o && o.const !== undefined) f.options.push(String(o.const)), f.labels.push(str(o.title) || String(o.const));
  };
  const items = p.items || {};
  if (Array.isArray(p.enum) && p.enum.length) {
    f.kind = 'enum';
    f.options = p.enum.map(String);
    f.labels = Array.isArray(p.enumNames) && p.enumNames.length === f.options.length ? p.enumNames.map(String) : f.options;
  } else if (Array.isArray(p.oneOf) && p.oneOf.length) {
    f.kind = 'enum';
    titled(p.oneOf);
  } else if (f.kind === 'array' && Array.isArray(items.enum) && items.enum.length) {
    f.kind = 'multi';
    f.options = items.enum.map(String);
    f.labels = f.options;
  } else if (f.kind === 'array' && Array.isArray(items.anyOf) && items.anyOf.length) {
    f.kind = 'multi';
    titled(items.anyOf);
  } else if (!['number', 'integer', 'boolean'].includes(f.kind)) {
    f.kind = 'string';
  }
  return f;
}

const str = (v) => (typeof v === 'string' ? v : '');
const num = (v) => (typeof v === 'number' && isFinite(v) ? v : undefined);

/**
 * formContent is the answer's content from the fields and what the form
 * holds of each: values maps a field's name to its text (string, number,
 * integer, enum), its state (boolean) or its picked options (multi). An
 * empty optional field is left out. It returns {content} or {error}, the
 * error naming the first field that is missing or not of its type.
 */
export function formContent(fields, values) {
  const content = {};
  for (const f of fields) {
    const v = values[f.name];
    if (f.kind === 'boolean') {
      content[f.name] = !!v;
      continue;
    }
    if (f.kind === 'multi') {
      const picked = Array.isArray(v) ? f.options.filter((o) => v.includes(o)) : [];
      if (!picked.length && f.required) return { error: f.title + ' needs at least one choice' };
      if (picked.length) content[f.name] = picked;
      continue;
    }
    const text = typeof v === 'string' ? v.trim() : '';
    if (f.kind === 'enum') {
      if (f.options.includes(text)) content[f.name] = text;
      else if (f.required) return { error: f.title + ' needs a choice' };
      continue;
    }
    if (text === '') {
      if (f.required) return { error: f.title + ' is required' };
      continue;
    }
    if (f.kind === 'number' || f.kind === 'integer') {
      const n = Number(text);
      if (!isFinite(n)) return { error: f.title + ' must be a number' };
      if (f.kind === 'integer' && !Number.isInteger(n)) return { error: f.title + ' must be a whole number' };
      content[f.name] = n;
      continue;
    }
    content[f.name] = text;
  }
  return { content };
}
