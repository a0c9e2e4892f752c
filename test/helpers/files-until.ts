import { watch } from 'node:fs';

/**
 * Resolves with what `check` gives once it gives something, checked now and again at each change under `dir`
 * (a file another process writes in the background); rejects after `timeoutMs`. Changes are watched, never polled.
 */
export async function filesUntil<T>(dir: string, check: () => Promise<T | undefined | false>, what: string, timeoutMs = 30_000): Promise<T> {
  const watcher = watch(dir, { recursive: true });
  let timer: NodeJS.Timeout | undefined;
  try {
    return await new Promise<T>((resolve, reject) => {
      let checking = false;
      let again = false;
      const run = async (): Promise<void> => {
        if (checking) return void (again = true);
        checking = true;
        try {
          do {
            again = false;
            const hit = await check();
            if (hit) return resolve(hit);
          } while (again);
        } catch (err) {
          reject(err);
        } finally {
          checking = false;
        }
      };
      timer = setTimeout(() => reject(new Error(`timed out waiting for ${what} in ${dir}`)), timeoutMs);
      watcher.on('change', () => void run());
      watcher.on('error', reject);
      void run();
    });
  } finally {
    clearTimeout(timer);
    watcher.close();
  }
}
