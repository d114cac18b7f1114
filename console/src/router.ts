// The console's pages. Each page is its own chunk, loaded when first opened. The server answers
// index.html for exactly these paths (src/http/console-static.ts's CONSOLE_PAGES; a test keeps
// the two lists equal). Pages other than the public ones need a session: without one, the
// router goes to first-run setup while Signet has no user, else to sign-in.
import { createRouter, createWebHistory, type RouteRecordRaw } from 'vue-router';
import { api, unwrap } from './api/client.ts';
import { i18n } from './i18n/index.ts';
import { loadSession } from './session.ts';

declare module 'vue-router' {
  interface RouteMeta {
    public?: boolean;
    /** i18n key of the page title. */
    title?: string;
  }
}

export const routes: RouteRecordRaw[] = [
  { path: '/', redirect: '/apps' },
  { path: '/sign-in', component: () => import('./pages/SignInPage.vue'), meta: { public: true, title: 'auth.signIn' } },
  { path: '/setup', component: () => import('./pages/SetupPage.vue'), meta: { public: true, title: 'auth.setupTitle' } },
  { path: '/invite', component: () => import('./pages/InvitePage.vue'), meta: { public: true, title: 'auth.inviteButton' } },
  { path: '/reset-password', component: () => import('./pages/ResetPasswordPage.vue'), meta: { public: true, title: 'auth.resetTitle' } },
  { path: '/apps', component: () => import('./pages/AppsPage.vue'), meta: { title: 'nav.apps' } },
  { path: '/apps/:app_id', component: () => import('./pages/AppDetailPage.vue'), meta: { title: 'nav.apps' } },
  { path: '/upload', component: () => import('./pages/UploadPage.vue'), meta: { title: 'nav.upload' } },
  { path: '/tasks', component: () => import('./pages/TasksPage.vue'), meta: { title: 'nav.tasks' } },
  { path: '/tasks/:task_id', component: () => import('./pages/TaskDetailPage.vue'), meta: { title: 'nav.tasks' } },
  { path: '/certificates', component: () => import('./pages/CertificatesPage.vue'), meta: { title: 'nav.certificates' } },
  { path: '/alerts', component: () => import('./pages/AlertsPage.vue'), meta: { title: 'nav.alerts' } },
  { path: '/developer-accounts', component: () => import('./pages/DeveloperAccountsPage.vue'), meta: { title: 'nav.developerAccounts' } },
  { path: '/links', component: () => import('./pages/LinksPage.vue'), meta: { title: 'nav.links' } },
  { path: '/settings/developer', component: () => import('./pages/DeveloperSettingsPage.vue'), meta: { title: 'nav.developerSettings' } },
  { path: '/members', component: () => import('./pages/MembersPage.vue'), meta: { title: 'nav.members' } },
  { path: '/profile', component: () => import('./pages/ProfilePage.vue'), meta: { title: 'nav.profile' } },
];

export const router = createRouter({ history: createWebHistory(), routes });

router.beforeEach(async (to) => {
  if (to.meta.public) return true;
  if (await loadSession()) return true;
  const setup = await unwrap(api.GET('/setup', { params: { query: { token: '' } } })).catch(() => null);
  if (setup?.needed) return { path: '/setup' };
  return { path: '/sign-in', query: to.fullPath === '/apps' ? {} : { next: to.fullPath } };
});

router.afterEach((to) => {
  const title = to.meta.title ? i18n.global.t(to.meta.title) : '';
  document.title = title ? `${title} · Signet` : 'Signet';
});
