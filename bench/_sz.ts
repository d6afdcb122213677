import { readFile } from 'node:fs/promises';
import { scanMarked } from '../src/main/core/store/recording/members';
async function main() {
  const all = await readFile(process.argv[2]);
  const ms = scanMarked(all);
  let ov = 0; for (const m of ms) ov += m.length;
  console.log('file', all.length, 'marked', ms.length, 'bytes', ov, (ov / all.length * 100).toFixed(2) + '%', 'per member', Math.round(ov / ms.length));
}
void main();
