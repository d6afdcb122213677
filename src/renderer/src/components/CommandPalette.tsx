// Ctrl/Cmd+K: every action by name — pages, ranges, theme, notifications, demo faults.
import { useEffect, useMemo, useRef, useState } from 'react';
import { setPalette, useUi } from '../state/ui';

export interface Command {
  id: string;
  title: string;
  hint?: string;
  run: () => void;
}

export function CommandPalette({ commands }: { commands: Command[] }): React.JSX.Element | null {
  const { paletteOpen } = useUi();
  // Mounted only while open, so every opening starts with an empty query.
  return paletteOpen ? <PaletteBody commands={commands} /> : null;
}

function PaletteBody({ commands }: { commands: Command[] }): React.JSX.Element {
  const [q, setQ] = useState('');
  const [sel, setSel] = useState(0);
  const input = useRef<HTMLInputElement>(null);
  const matches = useMemo(() => {
    const words = q.toLowerCase().split(/\s+/).filter(Boolean);
    return commands.filter((c) => words.every((w) => `${c.title} ${c.hint ?? ''}`.toLowerCase().includes(w)));
  }, [q, commands]);
  useEffect(() => input.current?.focus(), []);
  const run = (c: Command | undefined): void => {
    if (!c) return;
    setPalette(false);
    c.run();
  };
  return (
    <div className="modal-backdrop" onClick={() => setPalette(false)}>
      <div
        className="palette"
        role="dialog"
        aria-label="Command palette"
        data-testid="command-palette"
        onClick={(e) => e.stopPropagation()}
      >
        <input
          ref={input}
          data-testid="palette-input"
          placeholder="Type a command: decode, 24 h, dark, alerts…"
          value={q}
          onChange={(e) => {
            setQ(e.target.value);
            setSel(0);
          }}
          onKeyDown={(e) => {
            if (e.key === 'ArrowDown') {
              e.preventDefault();
              setSel((s) => Math.min(matches.length - 1, s + 1));
            } else if (e.key === 'ArrowUp') {
              e.preventDefault();
              setSel((s) => Math.max(0, s - 1));
            } else if (e.key === 'Enter') {
              e.preventDefault();
              run(matches[sel]);
            } else if (e.key === 'Escape') setPalette(false);
          }}
        />
        <ul>
          {matches.length === 0 && <li className="muted">No command matches “{q}”.</li>}
          {matches.map((c, i) => (
            <li
              key={c.id}
              data-testid="palette-item"
              data-command={c.id}
              className={i === sel ? 'selected' : ''}
              onMouseEnter={() => setSel(i)}
              onClick={() => run(c)}
            >
              <span>{c.title}</span>
              {c.hint && <kbd>{c.hint}</kbd>}
            </li>
          ))}
        </ul>
      </div>
    </div>
  );
}
