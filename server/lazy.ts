/**
 * A module (or anything) loaded on first use, not at start, and shared by every caller after; a
 * failed load is forgotten, so the next call tries again. Keeps heavy packages off the start path
 * (test/server/lazy-imports.test.ts).
 */
export function lazy<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | null = null;
  return () => {
    if (!loading) {
      const started = load();
      loading = started;
      started.catch(() => {
        if (loading === started) loading = null;
      });
    }
    return loading;
  };
}
