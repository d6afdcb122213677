// Fails when src/ has an import cycle, type-only imports included (eslint's import-x/no-cycle would skip those,
// so this one check stands for both): a module's shared types go in a small types file both sides import. Run by
// `npm run lint`.
import { parseCircular, parseDependencyTree, shortenTree } from 'dpdm';

const context = process.cwd();
const tree = shortenTree(
  context,
  // tsconfig.web.json resolves both aliases, @shared and @renderer.
  await parseDependencyTree(['src/**/*.ts', 'src/**/*.tsx'], { context, tsconfig: 'tsconfig.web.json' }),
);
const files = Object.keys(tree).filter((f) => f.startsWith('src/')).length;
const cycles = parseCircular(tree, false);
if (cycles.length > 0) {
  console.error(`${cycles.length} import cycle(s) in src/ (type-only imports count):`);
  for (const c of cycles) console.error(`  ${[...c, c[0]].join(' -> ')}`);
  console.error('Move the types both sides need into a small types file next to them, imported by both.');
  process.exit(1);
}
console.log(`no import cycle among ${files} files in src/`);
