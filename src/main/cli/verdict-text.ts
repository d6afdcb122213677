// The verdict of `status`: the one the dashboard shows above the pipeline (where requests pile up and what to do
// next), taken from the app's dashboard snapshot of the deployment, so the terminal and the window say the same.
import type { Verdict } from '@shared/contract';
import { oneLine } from '@shared/display-text';

export function verdictText(v: Verdict): string {
  return `verdict: ${oneLine(v.headline)}\n  next: ${oneLine(v.nextStep)}\n`;
}
