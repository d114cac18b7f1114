// Console entry point: the app shell, the router and the translations.
import { createApp } from 'vue';
import App from './App.vue';
import { whenUnauthorized } from './api/client.ts';
import { i18n, setLocale } from './i18n/index.ts';
import { router } from './router.ts';
import { forget } from './session.ts';
import './styles/main.css';

setLocale(i18n.global.locale.value as 'en' | 'zh-CN');
// A 401 anywhere (expired or revoked session): back to sign-in, then back here.
whenUnauthorized(() => {
  forget();
  const current = router.currentRoute.value;
  if (!current.meta.public) void router.push({ path: '/sign-in', query: { next: current.fullPath, expired: '1' } });
});

createApp(App).use(i18n).use(router).mount('#app');
