// The pages' only script, served as a static file (page-assets.ts), never inline. Everything
// works without it; it improves one case the server cannot see: iPadOS Safari presents itself as
// a Mac, so the page shows the QR code first with a plain install link; a Mac has no touch
// screen (navigator.maxTouchPoints is 0), so a touch device is an iPad and gets the install
// button and the phone layout.
export const PAGE_SCRIPT = `(function () {
  'use strict';
  var link = document.getElementById('install-ipad');
  if (!link || !(navigator.maxTouchPoints > 0)) return;
  var hint = document.getElementById('ipad-hint');
  link.className = 'button';
  link.id = 'install';
  link.textContent = link.getAttribute('data-button-label') || link.textContent;
  if (hint) hint.parentNode.replaceChild(link, hint);
  var page = document.querySelector('.page');
  if (page) page.classList.remove('wide');
  var qr = document.getElementById('qr');
  if (qr && qr.parentNode) qr.parentNode.insertBefore(qr, document.querySelector('footer'));
})();
`;
