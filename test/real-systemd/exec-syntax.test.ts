// systemd's own reading of ExecStart= lines against ours: each line runs in a real unit under systemd 252 and
// prints the argv it received; discovery's split (systemd.syntax quoting, C escapes, specifiers, $VAR/${VAR}
// expansion) must give the same words — or, where systemd refuses the line, refuse it too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expandEnv, expandSpecifiers, splitExecLine } from '../../src/main/core/discovery/exec-words';
import { bootRealSystemd, realSystemdUnavailableReason, type RealHost } from './container';

const skip = realSystemdUnavailableReason();
if (skip) console.warn(`[skipped] ExecStart quoting against a real systemd: ${skip}`);

const ENV = { V1: 'one two', PORT: '31100', EMPTY: '' };
const LINES = [
  `--served-model-name "DeepSeek's V4 Flash" --port 31100`,
  `--json-model-override-args '{"a": 1, "note": "a b"}'`,
  `{"a": 1, "note": "a b"}`,
  `a"b c"d 'e f'g`,
  `'it''s' "x'y" 'x"y'`,
  `\\x41\\x20B "tab\\there" \\101`,
  `"q \\" q" 'q \\' q'`,
  `$V1 \${V1}x "\${V1}" $$V1 "$V1" --port=\${PORT}`,
  `$EMPTY "$EMPTY" x\${EMPTY}y`,
  `a\\ b`,
  `%% %n %N %p`,
  `--served-model-name DeepSeek's`,
  `"unterminated`,
];

function unitText(line: string): string {
  return [
    '[Service]',
    'Type=oneshot',
    `Environment=${Object.entries(ENV)
      .map(([k, v]) => `"${k}=${v}"`)
      .join(' ')}`,
    `ExecStart=/usr/bin/python3 -c "import sys,json; print(json.dumps(sys.argv[1:]))" ${line}`,
    '',
  ].join('\n');
}

/** What discovery reads from the same line: split, specifiers for the unit, variables expanded. */
function ours(line: string, unit: string): string[] | null {
  const split = splitExecLine(expandSpecifiers(line, unit));
  if (split.error) return null;
  return expandEnv(split.argv, ENV).argv;
}

describe.skipIf(skip !== null)('ExecStart= words as systemd 252 splits them', () => {
  let host: RealHost;
  const files: Record<string, string> = {};
  LINES.forEach((line, i) => (files[`/etc/systemd/system/q${i}.service`] = unitText(line)));
  beforeAll(async () => {
    host = await bootRealSystemd({ files });
  }, 300_000);
  afterAll(async () => host?.stop());

  it.each(LINES.map((line, i) => [i, line] as const))('line %i: %s', async (i, line) => {
    const unit = `q${i}.service`;
    const start = await host.root(`systemctl start ${unit} 2>&1`);
    const printed = (await host.root(`journalctl -u ${unit} -o cat --no-pager | grep '^\\['`)).stdout.trim();
    const mine = ours(line, unit);
    if (start.code !== 0 || printed === '') {
      // systemd refused the unit (bad quoting): discovery must not read words out of it either.
      expect(mine).toBeNull();
      return;
    }
    expect(mine).toEqual(JSON.parse(printed));
  });
});
