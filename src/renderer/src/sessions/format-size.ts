// A file's size as the sessions page and the exports say it.
export function formatSize(b: number): string {
  if (b >= 1024 ** 3) return `${(b / 1024 ** 3).toFixed(2)} GiB`;
  if (b >= 1024 ** 2) return `${(b / 1024 ** 2).toFixed(1)} MiB`;
  return `${Math.max(1, Math.round(b / 1024))} KiB`;
}
