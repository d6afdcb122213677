// Drop a recording anywhere on the window to open it for review. While a file is dragged over the window a
// target covers it; the upload shows its progress, and a file that is not a recording says why.
import { useEffect, useRef, useState } from 'react';
import { errorText } from '../api/errors';
import { openRecordingFile, RECORDING_SUFFIX } from './upload';
import { showOpenedReview } from './open-review';
import './sessions.css';

function hasFiles(e: DragEvent): boolean {
  return !!e.dataTransfer && [...e.dataTransfer.types].includes('Files');
}

export function DropZone(): React.JSX.Element | null {
  const [over, setOver] = useState(false);
  const [busy, setBusy] = useState<{ name: string; fraction: number } | null>(null);
  const [error, setError] = useState<{ message: string; hint?: string } | null>(null);
  const depth = useRef(0);

  const open = async (file: File): Promise<void> => {
    setError(null);
    setBusy({ name: file.name, fraction: 0 });
    try {
      showOpenedReview(await openRecordingFile(file, (fraction) => setBusy({ name: file.name, fraction })));
    } catch (err) {
      const e = errorText(err);
      setError({
        message: e.message,
        hint:
          e.hint ??
          (file.name.endsWith(RECORDING_SUFFIX) ? undefined : `Recordings are ${RECORDING_SUFFIX} files.`),
      });
    } finally {
      setBusy(null);
    }
  };

  useEffect(() => {
    const enter = (e: DragEvent): void => {
      if (!hasFiles(e)) return;
      e.preventDefault();
      depth.current++;
      setOver(true);
    };
    const overH = (e: DragEvent): void => {
      if (!hasFiles(e)) return;
      // Without this the browser (or Electron) would navigate to the dropped file.
      e.preventDefault();
      if (e.dataTransfer) e.dataTransfer.dropEffect = 'copy';
    };
    const leave = (e: DragEvent): void => {
      if (!hasFiles(e)) return;
      depth.current = Math.max(0, depth.current - 1);
      if (depth.current === 0) setOver(false);
    };
    const drop = (e: DragEvent): void => {
      if (!hasFiles(e)) return;
      e.preventDefault();
      depth.current = 0;
      setOver(false);
      const file = e.dataTransfer?.files[0];
      if (file) void open(file);
    };
    window.addEventListener('dragenter', enter);
    window.addEventListener('dragover', overH);
    window.addEventListener('dragleave', leave);
    window.addEventListener('drop', drop);
    return () => {
      window.removeEventListener('dragenter', enter);
      window.removeEventListener('dragover', overH);
      window.removeEventListener('dragleave', leave);
      window.removeEventListener('drop', drop);
    };
  }, []);

  if (!over && !busy && !error) return null;
  return (
    <div className="drop-zone" data-testid="drop-zone" data-state={over ? 'over' : busy ? 'busy' : 'error'}>
      <div className="drop-card card">
        {over && (
          <p>
            Drop a <code>{RECORDING_SUFFIX}</code> recording to open it for review.
          </p>
        )}
        {busy && (
          <p role="status">
            Opening {busy.name}… {Math.round(busy.fraction * 100)} %
          </p>
        )}
        {error && !over && (
          <div role="alert" data-testid="drop-error">
            <p className="bad">
              <strong>{error.message}</strong>
            </p>
            {error.hint && <p>{error.hint}</p>}
            <button onClick={() => setError(null)} data-testid="drop-error-close">
              OK
            </button>
          </div>
        )}
      </div>
    </div>
  );
}
