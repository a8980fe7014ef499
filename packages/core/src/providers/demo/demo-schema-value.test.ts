import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { sampleJsonValue } from './demo-schema-value.js';

// An independent validator (draft 2020-12 with the standard formats) judges every generated value.
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);

function expectValid(schema: object, value: unknown): void {
  const validate = ajv.compile(schema);
  expect(validate(value), `${JSON.stringify(value)}: ${ajv.errorsText(validate.errors)}`).toBe(true);
}

/** [what the schema is, the schema, the value the generator gives]. */
const cases: [string, Record<string, unknown>, unknown][] = [
  ['a string', { type: 'string' }, 'demo'],
  ['a string with minLength', { type: 'string', minLength: 7 }, 'demoooo'],
  ['a string with maxLength', { type: 'string', maxLength: 2 }, 'de'],
  ['a date-time', { type: 'string', format: 'date-time' }, '2025-01-01T00:00:00Z'],
  ['a date', { type: 'string', format: 'date' }, '2025-01-01'],
  ['an email', { type: 'string', format: 'email' }, 'demo@example.com'],
  ['a uri', { type: 'string', format: 'uri' }, 'https://example.com/demo'],
  ['a uuid', { type: 'string', format: 'uuid' }, '00000000-0000-4000-8000-000000000000'],
  ['an integer', { type: 'integer' }, 0],
  ['an integer with a minimum', { type: 'integer', minimum: 3 }, 3],
  ['an integer with a fractional minimum', { type: 'integer', minimum: 2.5 }, 3],
  ['an integer with an exclusive minimum', { type: 'integer', exclusiveMinimum: 0 }, 1],
  ['an integer with a negative maximum', { type: 'integer', maximum: -4 }, -4],
  ['an integer with an exclusive negative maximum', { type: 'integer', exclusiveMaximum: -4 }, -5],
  ['an integer range containing 0', { type: 'integer', minimum: -10, maximum: 10 }, 0],
  ['an integer multipleOf', { type: 'integer', minimum: 7, multipleOf: 5 }, 10],
  ['a number', { type: 'number' }, 0],
  ['a number with a minimum', { type: 'number', minimum: 0.5 }, 0.5],
  ['a number in an exclusive range', { type: 'number', exclusiveMinimum: 1, exclusiveMaximum: 2 }, 1.5],
  ['a number with an exclusive maximum', { type: 'number', exclusiveMaximum: 0 }, -1],
  ['a number multipleOf 0.25', { type: 'number', minimum: 0.3, multipleOf: 0.25 }, 0.5],
  ['a boolean', { type: 'boolean' }, false],
  ['null', { type: 'null' }, null],
  ['an enum', { enum: ['red', 'green'] }, 'red'],
  ['a const', { const: 42 }, 42],
  ['a nullable type list', { type: ['null', 'string'] }, 'demo'],
  ['a nullable anyOf', { anyOf: [{ type: 'null' }, { type: 'integer', minimum: 1 }] }, 1],
  ['a oneOf', { oneOf: [{ type: 'boolean' }, { type: 'string' }] }, false],
  [
    'an object with required and optional properties',
    {
      type: 'object',
      properties: {
        name: { type: 'string' },
        age: { type: 'integer', minimum: 18 },
        note: { type: 'string' },
      },
      required: ['name', 'age'],
      additionalProperties: false,
    },
    { name: 'demo', age: 18 },
  ],
  [
    'an object with minProperties beyond required',
    { type: 'object', properties: { a: { type: 'boolean' }, b: { type: 'null' } }, minProperties: 2 },
    { a: false, b: null },
  ],
  ['an object with no properties', { type: 'object' }, {}],
  ['an array of strings', { type: 'array', items: { type: 'string' } }, ['demo']],
  [
    'an array with minItems and uniqueItems',
    { type: 'array', items: { type: 'integer' }, minItems: 3, uniqueItems: true },
    [0, 1, 2],
  ],
  [
    'unique enum items',
    { type: 'array', items: { enum: ['a', 'b', 'c'] }, minItems: 2, uniqueItems: true },
    ['a', 'b'],
  ],
  ['an array with maxItems 0', { type: 'array', items: { type: 'string' }, maxItems: 0 }, []],
  [
    'a tuple (prefixItems)',
    { type: 'array', prefixItems: [{ type: 'string' }, { type: 'integer' }], minItems: 2 },
    ['demo', 0],
  ],
  [
    'allOf, merged',
    {
      allOf: [
        { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] },
        { properties: { b: { type: 'integer', minimum: 2 } }, required: ['b'] },
      ],
    },
    { a: 'demo', b: 2 },
  ],
  [
    'a $ref into $defs',
    {
      type: 'object',
      properties: { point: { $ref: '#/$defs/point' } },
      required: ['point'],
      $defs: {
        point: { type: 'object', properties: { x: { type: 'number' } }, required: ['x'] },
      },
    },
    { point: { x: 0 } },
  ],
  [
    'no type: guessed from properties',
    { properties: { a: { type: 'string' } }, required: ['a'] },
    { a: 'demo' },
  ],
  ['an empty schema (anything)', {}, {}],
];

describe('sampleJsonValue: a value valid against the schema, the same every time', () => {
  it.each(cases)('%s', (_what, schema, expected) => {
    const value = sampleJsonValue(schema);
    expect(value).toEqual(expected);
    expectValid(schema, value);
    expect(sampleJsonValue(structuredClone(schema))).toEqual(value);
  });

  it('stops a recursive schema whose recursion is optional, with a valid value', () => {
    const tree = {
      type: 'object',
      properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#' } } },
      required: ['name', 'children'],
    };
    const value = sampleJsonValue(tree);
    expectValid(tree, value);
    expect(value).toMatchObject({ name: 'demo', children: [{ name: 'demo' }] });
  });

  it('bounds the size of what an absurd schema asks for', () => {
    const huge = {
      type: 'array',
      minItems: 1e9,
      items: { type: 'array', minItems: 1e9, items: { type: 'string', minLength: 1e9 } },
    };
    const value = sampleJsonValue(huge) as string[][];
    expect(value.length).toBeGreaterThan(0);
    expect(JSON.stringify(value).length).toBeLessThan(300_000);
  });

  it("gives valid values for zod schemas as the AI SDK sends them (zod's toJSONSchema)", () => {
    const schemas = [
      z.object({
        recipe: z.object({
          name: z.string(),
          servings: z.number().int().positive(),
          ingredients: z.array(z.object({ name: z.string(), amount: z.string() })).min(1),
          steps: z.array(z.string()),
          vegetarian: z.boolean(),
          difficulty: z.enum(['easy', 'medium', 'hard']),
          rating: z.number().min(1).max(5).nullable(),
          source: z.url().optional(),
        }),
      }),
      z.object({ kind: z.literal('event'), at: z.iso.datetime(), email: z.email(), id: z.uuid() }),
      z.discriminatedUnion('type', [
        z.object({ type: z.literal('a'), a: z.string() }),
        z.object({ type: z.literal('b'), b: z.number() }),
      ]),
      z.object({ tags: z.array(z.string()).length(3), score: z.number().gt(0).lt(1) }),
    ];
    for (const schema of schemas) {
      const json = z.toJSONSchema(schema) as Record<string, unknown>;
      const value = sampleJsonValue(json);
      expectValid(json, value);
      expect(schema.safeParse(value).success, JSON.stringify(value)).toBe(true);
    }
  });
});
