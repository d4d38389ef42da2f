/**
 * A tiny observer: one part announces that something happened (e.g. the certificates were
 * reloaded, src/tls/certificate-store.ts) and the adapters that care subscribe to it, so the
 * announcer never calls an adapter (docs/design.md rule 2). Listeners run synchronously and must
 * not throw; a throwing listener is isolated so the announcer never fails because of it.
 */
export class Signal<T = void> {
  private readonly listeners = new Set<(value: T) => void>();

  subscribe(listener: (value: T) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  notify(value: T): void {
    for (const listener of this.listeners) {
      try {
        listener(value);
      } catch {
        // The announcer's work is already committed; a listener's failure is its own.
      }
    }
  }
}
