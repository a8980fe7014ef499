#!/usr/bin/env node
// The docs check: in README.md and docs/**/*.md, every relative link resolves to a file (and a
// #anchor to a heading of the page it names), every `npm run X` names a script of the root
// package.json, and every `tollgate <command>` in code is a command the CLI's own --help lists.
// Config fields are checked by test/docs/configuration-doc.test.ts against the zod schema.
//
//   node scripts/check-docs.mjs [--root DIR]
//
// `--root` checks another tree (the tests point it at a fixture); the CLI is always this repo's.
// Prints one `file:line: problem` per problem and exits 1 if there is any.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');

function parseArgs(argv) {
  const at = argv.indexOf('--root');
  return { root: resolve(at === -1 ? REPO : (argv[at + 1] ?? '')) };
}

/** README.md and every .md file under docs/, as paths relative to the root. */
function pages(root) {
  const found = existsSync(join(root, 'README.md')) ? ['README.md'] : [];
  const walk = (dir) => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.md')) found.push(path);
    }
  };
  if (existsSync(join(root, 'docs'))) walk('docs');
  return found.sort();
}

/**
 * A page's lines: the line as written, whether it sits in a fenced block, its prose (inline code
 * removed; empty in a block) and its code (inline code spans, or the whole line in a block), so
 * links are read from prose and commands from code.
 */
function splitLines(text) {
  const out = [];
  let fence = null;
  for (const [index, raw] of text.split('\n').entries()) {
    const number = index + 1;
    const marker = raw.match(/^\s*(`{3,}|~{3,})/);
    if (marker && (fence === null || marker[1].startsWith(fence))) {
      fence = fence === null ? marker[1] : null;
      out.push({ number, raw, fenced: true, prose: '', code: '' });
    } else if (fence !== null) {
      out.push({ number, raw, fenced: true, prose: '', code: raw });
    } else {
      const spans = [...raw.matchAll(/(`+)(.+?)\1/g)].map((m) => m[2]);
      out.push({
        number,
        raw,
        fenced: false,
        prose: raw.replace(/(`+)(.+?)\1/g, ''),
        code: spans.join('\n'),
      });
    }
  }
  return out;
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchorsOf(text) {
  const anchors = new Set();
  const seen = new Map();
  for (const { raw, fenced } of splitLines(text)) {
    if (fenced) continue;
    for (const m of raw.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(m[1]);
    const heading = raw.match(/^#{1,6}\s+(.*?)\s*#*\s*$/);
    if (!heading) continue;
    const plain = heading[1]
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/<[^>]+>/g, '')
      .replace(/[`*]/g, '');
    const slug = plain
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** The link targets of a line of prose: inline links and images, reference definitions, HTML src/href. */
function linkTargets(prose) {
  const targets = [];
  for (const m of prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) targets.push(m[1]);
  const definition = prose.match(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/);
  if (definition) targets.push(definition[1]);
  for (const m of prose.matchAll(/\b(?:src|href)="([^"]+)"/g)) targets.push(m[1]);
  return targets;
}

/** The commands `tollgate --help` lists: `serve`, `ledger`, the groups and their subcommands. */
function cliCommands() {
  const run = spawnSync(process.execPath, ['--import', 'tsx', 'packages/node-server/src/cli.ts', '--help'], {
    cwd: REPO,
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`tollgate --help failed: ${run.stderr}`);
  const listed = run.stdout.slice(run.stdout.indexOf('Commands:'), run.stdout.indexOf('Options for every'));
  const commands = new Map();
  for (const m of listed.matchAll(/^ {2}([a-z][a-z-]*)(?: ([a-z][a-z-]*))?(?= |$)/gm)) {
    if (!commands.has(m[1])) commands.set(m[1], new Set());
    if (m[2]) commands.get(m[1]).add(m[2]);
  }
  commands.set('help', new Set());
  return commands;
}

function check(root) {
  const problems = [];
  const packageJson = join(root, 'package.json');
  const scripts = existsSync(packageJson)
    ? (JSON.parse(readFileSync(packageJson, 'utf8')).scripts ?? {})
    : {};
  const commands = cliCommands();
  const anchorCache = new Map();
  const anchors = (file) => {
    if (!anchorCache.has(file)) anchorCache.set(file, anchorsOf(readFileSync(file, 'utf8')));
    return anchorCache.get(file);
  };
  let links = 0;
  const files = pages(root);
  for (const page of files) {
    const text = readFileSync(join(root, page), 'utf8');
    for (const { number, prose, code } of splitLines(text)) {
      const at = `${page}:${number}`;
      for (const target of linkTargets(prose)) {
        if (/^[a-z][a-z0-9+.-]*:|^\/\//i.test(target)) continue;
        links += 1;
        const [pathPart, anchor] = target.split('#');
        const path = decodeURIComponent(pathPart.split('?')[0]);
        const base = path.startsWith('/') ? root : dirname(join(root, page));
        const file = path === '' ? join(root, page) : join(base, path);
        if (!existsSync(file)) {
          problems.push(`${at}: link "${target}": ${relative(root, file)} does not exist`);
        } else if (anchor && file.endsWith('.md') && statSync(file).isFile() && !anchors(file).has(anchor)) {
          problems.push(`${at}: link "${target}": ${relative(root, file)} has no heading #${anchor}`);
        }
      }
      for (const m of `${prose}\n${code}`.matchAll(/\bnpm run(?:-script)? ([\w:.-]+)/g)) {
        if (!Object.hasOwn(scripts, m[1]))
          problems.push(`${at}: "npm run ${m[1]}": package.json has no script "${m[1]}"`);
      }
      for (const m of code.matchAll(/(?<![\w@/.-])tollgate ([a-z][a-z-]*)(?: ([a-z][a-z-]*))?/g)) {
        const [, first, second] = m;
        const subcommands = commands.get(first);
        if (!subcommands) problems.push(`${at}: "tollgate ${first}": the CLI has no command "${first}"`);
        else if (second && subcommands.size > 0 && !subcommands.has(second)) {
          problems.push(`${at}: "tollgate ${first} ${second}": the CLI has no command "${first} ${second}"`);
        }
      }
    }
  }
  return { problems, files: files.length, links };
}

const { root } = parseArgs(process.argv.slice(2));
const { problems, files, links } = check(root);
for (const problem of problems) console.error(problem);
if (problems.length > 0) {
  console.error(`docs check: ${problems.length} problem(s) in ${files} page(s)`);
  process.exit(1);
}
console.log(`docs check: ${files} page(s), ${links} relative link(s), npm scripts and tollgate commands ok`);
