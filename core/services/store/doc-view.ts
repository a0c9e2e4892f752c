/** One document as the stores and the privacy controls use it (a `SqlDoc`, or one of an engine served for it). */
export interface DocView<T> {
  get(): Promise<T>;
  /** Changes it (in memory at once); `flush` waits until it is written. */
  update(change: (value: T) => T | void): Promise<T>;
  /** Removes it: afterwards `get` gives the declaration's `initial`. */
  remove(): Promise<void>;
  flush(): Promise<void>;
  /** Where an unreadable copy of it is set aside beside (`<file>.corrupt-<time>`), for a store's own documents. */
  readonly file?: string;
}

/** Every document of one `Store.chatDoc`, kept by an engine of its own (see `PluginStores.serve`). */
export interface DocEngine<T> {
  keys(): Promise<string[]>;
  doc(key: string): DocView<T>;
}
