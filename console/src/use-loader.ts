// Loading state of a page's data: `data` once loaded, `loading` while a request is out, `error`
// (a sentence) when it failed; `reload` runs it again. `errorText` words an API error for people.
import { ref, shallowRef, type Ref } from 'vue';
import { ApiError } from './api/client.ts';
import { i18n } from './i18n/index.ts';

export function errorText(error: unknown): string {
  if (error instanceof ApiError) {
    const key = `errors.${error.code}`;
    return i18n.global.te(key) ? i18n.global.t(key) : error.message;
  }
  return error instanceof Error ? error.message : String(error);
}

export function useLoader<T>(load: () => Promise<T>): { data: Ref<T | null>; loading: Ref<boolean>; error: Ref<string | null>; reload: (quiet?: boolean) => Promise<void> } {
  const data = shallowRef<T | null>(null);
  const loading = ref(true);
  const error = ref<string | null>(null);
  const reload = async (quiet = false) => {
    if (!quiet) loading.value = true;
    try {
      data.value = await load();
      error.value = null;
    } catch (cause) {
      error.value = errorText(cause);
    } finally {
      loading.value = false;
    }
  };
  void reload();
  return { data, loading, error, reload };
}
