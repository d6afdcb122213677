// Every host of a fleet with its own SSH link state: one host down is visible as that host, not as the whole
// deployment being disconnected.
import type { DeploymentSummary } from '@shared/domain';
import { connectionText } from '../components/ConnectionIndicator';
import { hostLinks, hostOrder } from './fleet-model';

export function HostLinks({ summary, now }: { summary: DeploymentSummary; now: number }): React.JSX.Element {
  const links = hostLinks(summary);
  const fleetHost = (id: string) => summary.fleet?.hosts.find((h) => h.id === id);
  return (
    <ul className="host-links" data-testid="host-links" aria-label="Hosts and their SSH links">
      {hostOrder(summary).map((id) => {
        const status = links.get(id);
        const fh = fleetHost(id);
        const c = status ? connectionText(status, now) : { text: 'no link', tone: 'idle' as const };
        const unreadable = status?.state === 'connected' && fh?.unreachable ? fh.unreachable : undefined;
        return (
          <li
            key={id}
            className={`conn conn-${unreadable ? 'bad' : c.tone}`}
            data-testid={`host-link-${id}`}
            data-state={status?.state ?? 'none'}
            title={`${id}: ${unreadable ?? c.text}${fh ? ` (${fh.via}: ${fh.addresses.join(', ')})` : ''}`}
          >
            <span className="dot" aria-hidden />
            <b>{id}</b>
            {/* Eight hosts fit one line when a working link is just its dot; a problem is said in full. */}
            {c.tone === 'ok' && !unreadable ? (
              <span className="sr-only">{c.text}</span>
            ) : (
              <span>{unreadable ?? c.text}</span>
            )}
          </li>
        );
      })}
    </ul>
  );
}
