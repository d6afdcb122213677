// `?`: the keyboard shortcuts.
import { setHelp, useUi } from '../state/ui';

export const SHORTCUTS: Array<[string, string]> = [
  ['Ctrl/⌘ + K', 'command palette'],
  ['?', 'this help'],
  ['o · k · m · a', 'overview · KV cache · metrics · alerts'],
  ['p · d · r', 'prefill · decode · router service page'],
  ['1 – 5', 'range 5 m · 1 h · 6 h · 24 h · all'],
  ['l', 'back to live after a zoom or pan'],
  ['t', 'toggle light / dark theme'],
  ['drag on a chart', 'zoom into that time window'],
  ['Ctrl + wheel', 'zoom in / out'],
  ['Shift + drag', 'pan'],
  ['click on a chart', 'journal lines ±20 s around that moment'],
  ['Esc', 'close dialogs'],
];

export function ShortcutHelp(): React.JSX.Element | null {
  const { helpOpen } = useUi();
  if (!helpOpen) return null;
  return (
    <div className="modal-backdrop" onClick={() => setHelp(false)}>
      <div
        className="help"
        role="dialog"
        aria-label="Keyboard shortcuts"
        data-testid="shortcut-help"
        onClick={(e) => e.stopPropagation()}
      >
        <h2>Keyboard shortcuts</h2>
        <dl>
          {SHORTCUTS.map(([k, v]) => (
            <div key={k}>
              <dt>
                <kbd>{k}</kbd>
              </dt>
              <dd>{v}</dd>
            </div>
          ))}
        </dl>
        <button onClick={() => setHelp(false)}>Close</button>
      </div>
    </div>
  );
}
