// A host's label and a session's name are printed on one line wherever they appear (the app, the CLI, recordings):
// the API refuses one with a line break or a control character, with a message that says so.
import { describe, expect, it } from 'vitest';
import { validateArgs } from '../../src/shared/schemas';

const FORGED = ['gpu\nstatus: all healthy', 'gpu\x1b]0;pwned\x07', 'gpu\u202eevil', 'gpu\tbox'];

describe('labels are one plain line', () => {
  it('addHost, updateHost and connectHost refuse a label with a line break or a control character', () => {
    for (const label of FORGED) {
      const host = { label, kind: 'ssh', alias: 'gpu' };
      expect(() => validateArgs('addHost', { host }), JSON.stringify(label)).toThrow(
        /host\.label: label must be one line of plain text: no line breaks, tabs, escape sequences/,
      );
      expect(() => validateArgs('updateHost', { id: 'gpu', patch: { label } })).toThrow(
        /one line of plain text/,
      );
      expect(() => validateArgs('connectHost', { host: { ...host, id: 'gpu' } })).toThrow(/one line/);
    }
    expect(
      validateArgs('addHost', { host: { label: 'lab box (powered off) — 8×H100', kind: 'ssh', alias: 'g' } }),
    ).toBeTruthy();
  });

  it('renameSession refuses such a name', () => {
    for (const name of FORGED)
      expect(() => validateArgs('renameSession', { id: 's1', name })).toThrow(/name must be one line/);
    expect(validateArgs('renameSession', { id: 's1', name: 'decode OOM, 3 May' }).name).toBe(
      'decode OOM, 3 May',
    );
  });
});
