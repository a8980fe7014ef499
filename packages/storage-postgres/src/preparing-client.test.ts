import { afterEach, describe, expect, it } from 'vitest';
import { PreparingClient } from './preparing-client.js';

const databaseUrl = process.env.TEST_DATABASE_URL;
const clients: PreparingClient[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) await client.end();
});

async function connect(): Promise<PreparingClient> {
  const client = new PreparingClient({ connectionString: databaseUrl! });
  await client.connect();
  clients.push(client);
  return client;
}

describe.skipIf(!databaseUrl)('PreparingClient (server at TEST_DATABASE_URL)', () => {
  it('prepares a parameterised statement once per connection and reuses it', async () => {
    const client = await connect();
    const text = 'select $1::int + 1 as next';
    expect((await client.query(text, [1])).rows).toEqual([{ next: 2 }]);
    expect((await client.query(text, [41])).rows).toEqual([{ next: 42 }]);
    const prepared = await client.query(
      "select statement from pg_prepared_statements where name like 'tg\\_%'",
    );
    expect(prepared.rows).toEqual([{ statement: text }]);
  });

  it('recovers from a table whose columns changed under a prepared SELECT * (another process migrating)', async () => {
    const client = await connect();
    await client.query('create temporary table widgets (id int primary key, name text)');
    await client.query("insert into widgets values (1, 'a')");
    const text = 'select * from widgets where id = $1';
    expect((await client.query(text, [1])).rows).toEqual([{ id: 1, name: 'a' }]);
    await client.query('alter table widgets add column colour text');
    // The prepared statement's result type is stale: this call fails…
    await expect(client.query(text, [1])).rejects.toThrow(/must not change result type/);
    // …and the next one prepares it again.
    expect((await client.query(text, [1])).rows).toEqual([{ id: 1, name: 'a', colour: null }]);
  });

  it('runs a statement without parameters as it is', async () => {
    const client = await connect();
    expect((await client.query('select 7 as seven')).rows).toEqual([{ seven: 7 }]);
    const prepared = await client.query('select name from pg_prepared_statements');
    expect(prepared.rows).toEqual([]);
  });
});
