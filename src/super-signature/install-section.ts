// The super-signature part of an install page (for iPhone/iPad visitors of a `super` release),
// in the page's language:
//   no enrollment yet   → "Register this device": download the request profile, then Settings;
//   queued … signing    → progress; the page refreshes itself every few seconds (a meta refresh,
//                         no script) and offers a plain Refresh link;
//   ready               → the Install button for this device's own build;
//   failed              → what went wrong in words a tester understands, and how to retry.
import { html, type Html } from '../distribution/html.ts';
import { messages, type Language, type Messages } from '../distribution/i18n/index.ts';
import { itmsServicesUrl } from '../distribution/manifest.ts';
import type { SuperSection } from '../distribution/pages/install-page.ts';
import type { Visitor } from '../distribution/user-agent.ts';
import type { EnrollmentStatus } from './enrollment.ts';

const PROGRESS: Record<string, (t: Messages) => string> = {
  awaiting_device: (t) => t.progressAwaitingDevice,
  queued: (t) => t.progressQueued,
  registering: (t) => t.progressRegistering,
  signing: (t) => t.progressSigning,
};

const FAILURES: Record<string, (t: Messages) => [string, string]> = {
  device_slots_exhausted: (t) => [t.failSlotsTitle, t.failSlots],
  device_ineligible: (t) => [t.failIneligibleTitle, t.failIneligible],
  device_pending_review: (t) => [t.failPendingTitle, t.failPending],
  developer_key_rejected: (t) => [t.failUnavailableTitle, t.failKeyRejected],
  developer_agreement_required: (t) => [t.failUnavailableTitle, t.failAgreement],
  developer_certificate_unusable: (t) => [t.failUnavailableTitle, t.failCertificate],
  certificate_required: (t) => [t.failUnavailableTitle, t.failNoAccount],
  apple_unavailable: (t) => [t.failAppleDownTitle, t.failAppleDown],
  apple_rate_limited: (t) => [t.failAppleBusyTitle, t.failAppleBusy],
  bundle_id_unavailable: (t) => [t.failBundleTitle, t.failBundle],
  super_signing_unavailable: (t) => [t.failNoSuperTitle, t.failNoSuper],
};

/** Seconds between refreshes while the device's build is being prepared. */
const REFRESH_SECONDS = 3;

export interface SuperSectionInput {
  language: Language;
  /** /d/{slug}, where the page lives. */
  pagePath: string;
  /** Absolute manifest URL of this device's build (query included), when ready. */
  manifestUrl: string | null;
  status: EnrollmentStatus | null;
  visitor: Visitor;
}

export function renderSuperSection(input: SuperSectionInput): SuperSection {
  const { status, visitor } = input;
  const t = messages(input.language);
  if (status === null) {
    const register = html`<a class="button" id="register" href="${input.pagePath}/udid.mobileconfig">${t.registerButton}</a>`;
    const steps = html`<section class="steps" aria-labelledby="register-title"><h2 id="register-title">${t.registerTitle}</h2><ol>
<li>${t.registerStepProfile}</li>
<li>${t.registerStepSettings}</li>
</ol></section>`;
    return { body: html`${register}${steps}`, refresh: null };
  }

  const { enrollment, build } = status;
  if (enrollment.state === 'ready' && build?.state === 'ready' && input.manifestUrl) {
    return {
      body: html`<a class="button" id="install" href="${itmsServicesUrl(input.manifestUrl)}">${t.installButton}</a>
<section class="steps" aria-labelledby="after-title"><h2 id="after-title">${t.afterInstallTitle}</h2><ol><li>${t.afterInstallConfirm}</li>${developerMode(t, visitor)}</ol></section>`,
      refresh: null,
    };
  }
  if (enrollment.state === 'failed') {
    const [title, message] = (FAILURES[enrollment.error_code ?? ''] ?? ((m: Messages) => [m.failOtherTitle, m.failOther]))(t);
    return {
      body: html`<div class="notice bad" role="alert" id="enrollment-error" data-code="${enrollment.error_code ?? ''}"><strong>${title}.</strong> ${message}</div>
<p class="hint"><a href="${input.pagePath}">${t.startAgain}</a></p>`,
      refresh: null,
    };
  }
  const text = (PROGRESS[enrollment.state] ?? ((m: Messages) => m.progressOther))(t);
  const self = `${input.pagePath}?enrollment=${enrollment.id}`;
  return {
    body: html`<p class="notice" role="status" id="progress" data-state="${enrollment.state}">${text}</p>
<p class="hint"><a href="${self}">${t.refresh}</a></p>`,
    refresh: { url: self, seconds: REFRESH_SECONDS },
  };
}

/** iOS 16+ runs ad-hoc apps only with Developer Mode on (§3.0); the toggle appears after the install. */
function developerMode(t: Messages, visitor: Visitor): Html {
  if (visitor.iosMajor !== null && visitor.iosMajor < 16) return html``;
  return html`<li>${t.superDeveloperMode}</li>`;
}

/** Adds the enrollment to a manifest or download URL (which may already carry `?t=`). */
export function withEnrollment(url: string, enrollmentId: string | undefined): string {
  if (enrollmentId === undefined) return url;
  return `${url}${url.includes('?') ? '&' : '?'}enrollment=${encodeURIComponent(enrollmentId)}`;
}

/** Reloads the page while a registration is in progress; a constant, allowed by its hash in the CSP. */
export const REFRESH_SCRIPT = "setTimeout(function () { var p = document.getElementById('progress'); if (p) location.replace(p.getAttribute('data-refresh')); }, 3000);";
