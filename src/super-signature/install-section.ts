// The super-signature part of an install page (for iPhone/iPad visitors of a `super` release):
//   no enrollment yet   → "Register this device": download the request profile, then Settings;
//   queued … signing    → progress, refreshed every few seconds (and a plain link without JS);
//   ready               → the Install button for this device's own build;
//   failed              → what went wrong in words a tester understands, and how to retry.
import { html, raw, type Html } from '../distribution/html.ts';
import { itmsServicesUrl } from '../distribution/manifest.ts';
import type { Visitor } from '../distribution/user-agent.ts';
import type { EnrollmentStatus } from './enrollment.ts';

const PROGRESS: Record<string, string> = {
  awaiting_device: 'Waiting for the profile to be installed in Settings…',
  queued: 'Device registered with Signet. Preparing…',
  registering: 'Registering this device with Apple…',
  signing: 'Building the app for this device…',
};

const FAILURES: Record<string, [string, string]> = {
  device_slots_exhausted: ['No device slot left', 'The developer accounts behind this link have no free slot for this kind of device this year. Contact the person who shared the link.'],
  device_ineligible: ['Device not accepted', 'Apple did not accept this device for ad-hoc installs. Contact the person who shared the link.'],
  device_pending_review: ['Apple is reviewing this device', 'Apple is still reviewing this device. Try again later by reopening this page and registering again.'],
  developer_key_rejected: ['Temporarily unavailable', 'The developer account behind this link needs attention from its owner. Try again later.'],
  developer_agreement_required: ['Temporarily unavailable', 'The developer account behind this link must accept Apple\'s new terms. Try again later.'],
  developer_certificate_unusable: ['Temporarily unavailable', 'The signing certificate behind this link has expired or was revoked. Contact the person who shared the link.'],
  certificate_required: ['Temporarily unavailable', 'This link has no developer account to register devices with. Contact the person who shared the link.'],
  apple_unavailable: ['Apple is not responding', 'Apple\'s servers could not be reached. Try again in a few minutes.'],
  apple_rate_limited: ['Too many requests', 'Apple is limiting requests right now. Try again in a few minutes.'],
  bundle_id_unavailable: ['Cannot be installed', 'This app\'s identifier is owned by another Apple team. Contact the person who shared the link.'],
  super_signing_unavailable: ['Cannot be installed yet', 'This server cannot build per-device copies of iOS apps yet. Contact the person who shared the link.'],
};

export interface SuperSectionInput {
  /** /d/{slug}, where the page lives. */
  pagePath: string;
  /** Absolute manifest URL of this device's build (query included), when ready. */
  manifestUrl: string | null;
  status: EnrollmentStatus | null;
  visitor: Visitor;
}

export function renderSuperSection(input: SuperSectionInput): Html {
  const { status, visitor } = input;
  const register = html`<a class="button" id="register" href="${input.pagePath}/udid.mobileconfig">Register this device</a>`;
  const steps = html`<section class="steps" aria-labelledby="register-title"><h2 id="register-title">Installing takes two steps</h2><ol>
<li>Tap <strong>Register this device</strong> and allow the download. It only tells this server your device identifier.</li>
<li>Open <strong>Settings</strong>, tap <strong>Profile Downloaded</strong>, then <strong>Install</strong>. You come back here automatically.</li>
</ol></section>`;
  if (status === null) return html`${register}${steps}`;

  const { enrollment, build } = status;
  if (enrollment.state === 'ready' && build?.state === 'ready' && input.manifestUrl) {
    return html`<a class="button" id="install" href="${itmsServicesUrl(input.manifestUrl)}">Install</a>
<section class="steps" aria-labelledby="after-title"><h2 id="after-title">After tapping Install</h2><ol><li>Confirm <strong>Install</strong> and go to the Home Screen to watch the download.</li>${developerMode(visitor)}</ol></section>`;
  }
  if (enrollment.state === 'failed') {
    const [title, message] = FAILURES[enrollment.error_code ?? ''] ?? ['Something went wrong', 'This device could not be prepared. Try registering it again.'];
    return html`<div class="notice" role="alert" id="enrollment-error" data-code="${enrollment.error_code ?? ''}"><strong>${title}.</strong> ${message}</div>
<p class="hint"><a href="${input.pagePath}">Start again</a></p>`;
  }
  const text = PROGRESS[enrollment.state] ?? 'Preparing…';
  const self = `${input.pagePath}?enrollment=${enrollment.id}`;
  return html`<p class="notice" role="status" id="progress" data-state="${enrollment.state}" data-refresh="${self}">${text}</p>
<p class="hint"><a href="${self}">Refresh</a></p>
${raw(`<script>${REFRESH_SCRIPT}</script>`)}`;
}

/** iOS 16+ runs ad-hoc apps only with Developer Mode on (§3.0); the toggle appears after the install. */
function developerMode(visitor: Visitor): Html {
  if (visitor.iosMajor !== null && visitor.iosMajor < 16) return html``;
  return html`<li>When you first open the app, iOS asks for <strong>Developer Mode</strong>: turn it on in <strong>Settings › Privacy &amp; Security › Developer Mode</strong>, restart, and confirm <strong>Turn On</strong>.</li>`;
}

/** Adds the enrollment to a manifest or download URL (which may already carry `?t=`). */
export function withEnrollment(url: string, enrollmentId: string | undefined): string {
  if (enrollmentId === undefined) return url;
  return `${url}${url.includes('?') ? '&' : '?'}enrollment=${encodeURIComponent(enrollmentId)}`;
}

/** Reloads the page while a registration is in progress; a constant, allowed by its hash in the CSP. */
export const REFRESH_SCRIPT = "setTimeout(function () { var p = document.getElementById('progress'); if (p) location.replace(p.getAttribute('data-refresh')); }, 3000);";
