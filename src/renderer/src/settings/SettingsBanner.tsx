// Says, on every screen, that the settings file cannot be used: the app runs on defaults and will not save over it.
import { useSettings } from '../state/settings';

export function SettingsBanner(): React.JSX.Element | null {
  const problem = useSettings().state?.problem;
  if (!problem) return null;
  return (
    <div className="banner banner-bad" role="alert" data-testid="settings-banner">
      Settings file not used: {problem.message} — {problem.hint} Changes made now last until PD Console quits.
    </div>
  );
}
