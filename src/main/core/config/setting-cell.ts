// One section of the settings as a service sees it: read it when needed, replace it (saved where the settings
// live), hear when something else replaced it (an import, another window). A service built without a settings
// file (tests, benchmarks) gets a memory cell.

export interface SettingCell<T> {
  get(): T;
  set(value: T): Promise<void>;
  /** Called after the value was replaced by someone else than this cell's own set(). */
  onChange(listener: (value: T) => void): () => void;
}

export function memoryCell<T>(initial: T): SettingCell<T> {
  let value = structuredClone(initial);
  return {
    get: () => value,
    set: async (v) => {
      value = structuredClone(v);
    },
    onChange: () => () => undefined,
  };
}
