// A service's or worker's properties as a definition list (systemd state, memory, health…), one row per
// property with a test id by name, as the service page and a fleet's worker page show them.
import type { ReactNode } from 'react';

export function PropList({ props }: { props: readonly (readonly [string, ReactNode])[] }): React.JSX.Element {
  return (
    <dl className="props">
      {props.map(([k, v]) => (
        <div key={k} data-testid={`prop-${k}`}>
          <dt>{k}</dt>
          <dd>{v}</dd>
        </div>
      ))}
    </dl>
  );
}
