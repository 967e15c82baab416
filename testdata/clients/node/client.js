// Node mysql2: connect (optionally over verified TLS), browse
// information_schema, catalog statements with text columns (SHOW TABLES,
// DATABASE(), a UNION of literals), a DP aggregate with query() and with execute() (a
// server-side prepared statement), SET, a refused query. Prints one line per
// step, as the Python scripts do (see ../steps.py).
'use strict';
const fs = require('fs');
const mysql = require('mysql2/promise');

const env = process.env;

async function step(name, fn) {
  try {
    const detail = await fn();
    console.log(`${name}\tok\t${detail}`);
    return true;
  } catch (e) {
    console.log(`${name}\terror\t${e.errno || 0}\t${String(e.message).replace(/\s+/g, ' ')}`);
    return false;
  }
}

async function main() {
  let conn;
  const opts = {
    host: env.DP_HOST, port: Number(env.DP_PORT), user: env.DP_USER, password: env.DP_PASSWORD, database: env.DP_DB || 'dpproxy',
  };
  if (env.DP_CA) opts.ssl = { ca: fs.readFileSync(env.DP_CA), rejectUnauthorized: true };
  if (!await step('connect', async () => { conn = await mysql.createConnection(opts); return env.DP_CA ? 'tls' : 'plain'; })) return;
  await step('browse', async () => {
    const [tables] = await conn.query("SELECT TABLE_NAME AS t FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()");
    const [cols] = await conn.query("SELECT COLUMN_NAME AS c FROM information_schema.COLUMNS WHERE TABLE_NAME = 'pums' ORDER BY ORDINAL_POSITION");
    return `tables=${tables.map((r) => r.t).join(',')};columns=${cols.map((r) => r.c).join(',')}`;
  });
  // Text columns the catalog engine types: their collation id must be one
  // mysql2 knows (it closed the connection on utf8mb4_0900_bin, 309).
  await step('catalog', async () => {
    const [shown] = await conn.query('SHOW TABLES');
    const [[db]] = await conn.query('SELECT DATABASE() AS d, UPPER(USER()) AS u');
    const [union] = await conn.query("SELECT 'a' AS x UNION SELECT 'b'");
    const [[prepared]] = await conn.execute('SELECT DATABASE() AS d');
    return `tables=${shown.map((r) => Object.values(r)[0]).join(',')};db=${db.d};union=${union.map((r) => r.x).join(',')};prepared=${prepared.d}`;
  });
  await step('aggregate', async () => { const [rows] = await conn.query('SELECT AVG(age) AS a FROM pums'); return rows[0].a; });
  await step('execute', async () => { const [rows] = await conn.execute('SELECT AVG(age) AS a FROM pums WHERE sex = ?', [1]); return rows[0].a; });
  await step('set', async () => { await conn.query('SET @dp_epsilon = 0.5'); return 'done'; });
  await step('refused', async () => conn.query('SELECT * FROM pums'));
  await conn.end();
}

main().catch((e) => { console.error(e); process.exit(1); });
