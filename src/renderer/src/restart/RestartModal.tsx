// The modal frame of every restart view (the plans and the progress of an in-place restart and of a roll):
// a backdrop that closes it, Escape that closes it, and page shortcuts (d, r, 1–5…) that must not fire behind it.
import type { ReactNode } from 'react';

export function RestartModal({
  onClose,
  className,
  backdropClassName = 'modal-backdrop',
  label,
  testId,
  modal = false,
  data = {},
  children,
}: {
  onClose: () => void;
  className: string;
  backdropClassName?: string;
  label: string;
  testId: string;
  /** A confirmation that must be answered (aria-modal); a progress view is not. */
  modal?: boolean;
  /** data-* attributes the tests and styles read (state, operation id). */
  data?: Record<`data-${string}`, string>;
  children: ReactNode;
}): React.JSX.Element {
  return (
    <div className={backdropClassName} onClick={onClose}>
      <div
        className={className}
        role="dialog"
        {...(modal ? { 'aria-modal': true } : {})}
        aria-label={label}
        data-testid={testId}
        {...data}
        onClick={(e) => e.stopPropagation()}
        onKeyDown={(e) => {
          e.stopPropagation();
          if (e.key === 'Escape') onClose();
        }}
      >
        {children}
      </div>
    </div>
  );
}
