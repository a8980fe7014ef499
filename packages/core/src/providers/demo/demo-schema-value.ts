/*
 * A small deterministic generator of JSON values for a JSON schema: what the offline demo model
 * puts in a tool call's arguments and in a `response_format` json_schema answer, so clients that
 * parse and validate what a model returns (the AI SDK's `generateObject`, agent frameworks) get a
 * value they accept. It covers the schemas clients send — zod's and OpenAI's strict-mode output:
 * objects (the `required` properties), arrays, strings (length, common formats), numbers and
 * integers within their bounds and `multipleOf`, booleans, `null`, `enum`, `const`, `anyOf` /
 * `oneOf` (the first non-null branch), `allOf` (merged), nullable types, local `$ref`s. `pattern`,
 * `not`, `contains` and `if`/`then` are not honoured: a value may miss them.
 */

type Schema = Record<string, unknown>;

/** Nesting beyond which objects stop filling their properties and arrays stay empty (recursive schemas). */
const MAX_DEPTH = 12;
/** Nesting up to which an array with no `minItems` still gets one item, to show its shape. */
const SAMPLE_ITEM_DEPTH = 4;
/**
 * The size one sample may reach, counting a unit per value and per character padded into a string:
 * a caller's schema must not make the gateway build a huge answer (`minItems: 1e9`, nested arrays,
 * `minLength: 1e9`). Past it arrays stop growing and strings stop padding, so such a value may miss
 * a `minItems` or `minLength` that no real model's answer would meet either.
 */
const BUDGET = 100_000;

/** The value of each string `format` the generator knows; others get a plain word. */
const FORMAT_VALUES: Record<string, string> = {
  'date-time': '2025-01-01T00:00:00Z',
  date: '2025-01-01',
  time: '00:00:00Z',
  duration: 'P1D',
  email: 'demo@example.com',
  'idn-email': 'demo@example.com',
  hostname: 'example.com',
  'idn-hostname': 'example.com',
  ipv4: '127.0.0.1',
  ipv6: '::1',
  uri: 'https://example.com/demo',
  url: 'https://example.com/demo',
  'uri-reference': 'https://example.com/demo',
  iri: 'https://example.com/demo',
  uuid: '00000000-0000-4000-8000-000000000000',
};

interface Context {
  root: unknown;
  depth: number;
  /** The units of {@link BUDGET} left, shared by every branch of the sample. */
  budget: { left: number };
  /** The position among siblings of an array, so `uniqueItems` arrays get distinct items. */
  variant: number;
}

/**
 * A JSON value `schema` accepts (within the keywords this generator covers), the same for the same
 * schema: `const`, else an `enum` value, else by type — `"demo"`, 0 or the allowed number nearest
 * to it, `false`, `null`, one item per array (or `minItems`), and objects with their `required`
 * properties.
 */
export function sampleJsonValue(schema: unknown): unknown {
  return generate(schema, { root: schema, depth: 0, budget: { left: BUDGET }, variant: 0 });
}

function generate(schema: unknown, context: Context): unknown {
  context.budget.left--;
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return null;
  const s = schema as Schema;
  if (typeof s.$ref === 'string') {
    const target = resolveRef(context.root, s.$ref);
    if (target !== undefined && context.depth < MAX_DEPTH) {
      return generate(target, { ...context, depth: context.depth + 1 });
    }
  }
  if ('const' in s) return s.const;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[context.variant % s.enum.length];
  if (Array.isArray(s.allOf)) {
    const { allOf, ...rest } = s;
    return generate(allOf.reduce<Schema>(mergeSchemas, rest), context);
  }
  for (const keyword of ['anyOf', 'oneOf'] as const) {
    const branches = s[keyword];
    if (Array.isArray(branches) && branches.length > 0) {
      const { [keyword]: _, ...rest } = s;
      const branch = branches.find((b) => !isNullSchema(b)) ?? branches[0];
      return generate(mergeSchemas(rest, branch), context);
    }
  }
  switch (typeOf(s)) {
    case 'object':
      return objectValue(s, context);
    case 'array':
      return arrayValue(s, context);
    case 'string':
      return stringValue(s, context);
    case 'integer':
      return numberValue(s, true, context.variant);
    case 'number':
      return numberValue(s, false, context.variant);
    case 'boolean':
      return context.variant % 2 === 1;
    case 'null':
      return null;
    default:
      return {};
  }
}

/** The schema's type: the first non-null of a type list, else guessed from its keywords. */
function typeOf(s: Schema): string | null {
  if (typeof s.type === 'string') return s.type;
  if (Array.isArray(s.type)) return s.type.find((t) => t !== 'null') ?? s.type[0] ?? null;
  if ('properties' in s || 'required' in s || 'additionalProperties' in s) return 'object';
  if ('items' in s || 'prefixItems' in s || 'minItems' in s) return 'array';
  if ('minLength' in s || 'maxLength' in s || 'format' in s) return 'string';
  if ('minimum' in s || 'maximum' in s || 'multipleOf' in s) return 'number';
  return null;
}

function isNullSchema(schema: unknown): boolean {
  const s = schema as Schema | null;
  return s?.type === 'null' || (Array.isArray(s?.enum) && s.enum.length === 1 && s.enum[0] === null);
}

/** `a` and `b` as one schema: `b`'s keywords over `a`'s, their properties and `required` joined. */
function mergeSchemas(a: Schema, b: unknown): Schema {
  if (typeof b !== 'object' || b === null) return a;
  const other = b as Schema;
  const merged: Schema = { ...a, ...other };
  if (isRecord(a.properties) || isRecord(other.properties)) {
    merged.properties = { ...(a.properties as Schema), ...(other.properties as Schema) };
  }
  const required = [...asArray(a.required), ...asArray(other.required)];
  if (required.length > 0) merged.required = [...new Set(required)];
  return merged;
}

/** A local reference: `#` or a JSON pointer into the root (`#/$defs/Node`, `#/definitions/x`). */
function resolveRef(root: unknown, ref: string): unknown {
  if (!ref.startsWith('#')) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(1).split('/').slice(1)) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (!isRecord(node) && !Array.isArray(node)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

function objectValue(s: Schema, context: Context): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (context.depth >= MAX_DEPTH) return out;
  const properties = isRecord(s.properties) ? s.properties : {};
  const names = asArray(s.required).filter((name): name is string => typeof name === 'string');
  // Enough of the declared properties to reach minProperties.
  const minProperties = typeof s.minProperties === 'number' ? s.minProperties : 0;
  for (const name of Object.keys(properties)) {
    if (names.length >= minProperties) break;
    if (!names.includes(name)) names.push(name);
  }
  const inner = { ...context, depth: context.depth + 1, variant: 0 };
  for (const name of names) {
    const property =
      name in properties ? properties[name] : isRecord(s.additionalProperties) ? s.additionalProperties : {};
    out[name] = generate(property, inner);
  }
  return out;
}

function arrayValue(s: Schema, context: Context): unknown[] {
  const prefix = Array.isArray(s.prefixItems) ? s.prefixItems : Array.isArray(s.items) ? s.items : [];
  const rest = Array.isArray(s.items) ? s.additionalItems : s.items;
  const minItems = typeof s.minItems === 'number' ? s.minItems : 0;
  const maxItems = typeof s.maxItems === 'number' ? s.maxItems : Number.POSITIVE_INFINITY;
  const sample = context.depth < SAMPLE_ITEM_DEPTH && rest !== false ? 1 : 0;
  const count = context.depth >= MAX_DEPTH ? 0 : Math.min(Math.max(minItems, sample), maxItems);
  const items: unknown[] = [];
  for (let i = 0; i < count && context.budget.left > 0; i++) {
    const inner = { ...context, depth: context.depth + 1, variant: i < prefix.length ? 0 : i };
    items.push(
      generate(i < prefix.length ? prefix[i] : rest === undefined || rest === true ? {} : rest, inner),
    );
  }
  return items;
}

function stringValue(s: Schema, context: Context): string {
  const known = typeof s.format === 'string' ? FORMAT_VALUES[s.format] : undefined;
  let text = known ?? (context.variant === 0 ? 'demo' : `demo ${context.variant + 1}`);
  if (typeof s.minLength === 'number' && text.length < s.minLength) {
    text = text.padEnd(Math.min(s.minLength, Math.max(text.length, context.budget.left)), 'o');
  }
  if (typeof s.maxLength === 'number' && text.length > s.maxLength) text = text.slice(0, s.maxLength);
  context.budget.left -= text.length;
  return text;
}

/**
 * 0 when the bounds allow it, else the allowed number nearest to it; `variant` steps above that
 * when it still fits; then a multiple of `multipleOf` (rounded up, else down). Both spellings of exclusive bounds are read: the number
 * (draft 6 on) and the boolean beside `minimum`/`maximum` (draft 4).
 */
function numberValue(s: Schema, integer: boolean, variant: number): number {
  const low = bound(s, 'minimum', 'exclusiveMinimum', Math.max);
  const high = bound(s, 'maximum', 'exclusiveMaximum', Math.min);
  const fits = (n: number) =>
    (low === null || (low.strict ? n > low.value : n >= low.value)) &&
    (high === null || (high.strict ? n < high.value : n <= high.value));
  let value = 0;
  if (!fits(0) && low !== null && (low.strict ? low.value >= 0 : low.value > 0)) {
    // Zero is below the range: its lowest value.
    if (integer) value = low.strict ? Math.floor(low.value) + 1 : Math.ceil(low.value);
    else if (!low.strict) value = low.value;
    else value = high === null ? low.value + 1 : (low.value + high.value) / 2;
  } else if (!fits(0) && high !== null) {
    // Zero is above the range: its highest value.
    if (integer) value = high.strict ? Math.ceil(high.value) - 1 : Math.floor(high.value);
    else if (!high.strict) value = high.value;
    else value = low === null ? high.value - 1 : (low.value + high.value) / 2;
  }
  if (variant > 0 && fits(value + variant)) value += variant;
  const step = typeof s.multipleOf === 'number' && s.multipleOf > 0 ? s.multipleOf : null;
  if (step !== null) {
    const up = Math.ceil(value / step) * step;
    value = fits(up) ? up : Math.floor(value / step) * step;
  }
  return value;
}

/** The tighter of a schema's inclusive and exclusive bound on one side, `null` when it has none. */
function bound(
  s: Schema,
  inclusive: 'minimum' | 'maximum',
  exclusive: 'exclusiveMinimum' | 'exclusiveMaximum',
  tighter: (a: number, b: number) => number,
): { value: number; strict: boolean } | null {
  const plain = typeof s[inclusive] === 'number' ? (s[inclusive] as number) : null;
  if (typeof s[exclusive] === 'number') {
    const strictValue = s[exclusive] as number;
    if (plain === null || tighter(plain, strictValue) === strictValue)
      return { value: strictValue, strict: true };
    return { value: plain, strict: false };
  }
  if (plain === null) return null;
  return { value: plain, strict: s[exclusive] === true };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}
