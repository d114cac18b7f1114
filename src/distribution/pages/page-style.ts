// The stylesheet of every public page, served as a static file (page-assets.ts) so the pages
// carry no inline style or script and work under a strict Content-Security-Policy. Mobile first;
// wide screens get the QR code beside the app. Chinese text uses the Simplified or Traditional
// glyph set of the page's language (:lang), falling back to Noto CJK where no system font has it.
export const PAGE_STYLE = `
*,*::before,*::after{box-sizing:border-box}
:root{--bg:#f2f4f7;--card:#fff;--text:#111827;--muted:#5b6472;--line:#e6e8ec;--accent:#0a66ff;--accent-dark:#0050d4;--warn-bg:#fff7e8;--warn-line:#f3c26b;--bad-bg:#fdeeee;--bad-line:#ec9a9a;--radius:20px}
html{-webkit-text-size-adjust:100%;text-size-adjust:100%}
body{margin:0;min-height:100vh;background:var(--bg);color:var(--text);font:16px/1.55 -apple-system,BlinkMacSystemFont,"Segoe UI",Roboto,"Helvetica Neue",Arial,"Noto Sans",sans-serif}
body:lang(zh-CN){font-family:-apple-system,BlinkMacSystemFont,"PingFang SC","Hiragino Sans GB","Microsoft YaHei","Noto Sans CJK SC","Noto Sans SC",sans-serif}
body:lang(zh-TW){font-family:-apple-system,BlinkMacSystemFont,"PingFang TC","Microsoft JhengHei","Noto Sans CJK TC","Noto Sans TC",sans-serif}
a{color:var(--accent)}
a:focus-visible,.button:focus-visible,input:focus-visible,button:focus-visible{outline:3px solid #ffbf47;outline-offset:2px}
.page{max-width:30rem;margin:0 auto;padding:1.5rem 1rem 2rem;display:grid;gap:1rem}
.card{background:var(--card);border-radius:var(--radius);box-shadow:0 1px 2px rgba(16,24,40,.06),0 4px 16px rgba(16,24,40,.06);padding:1.5rem 1.25rem}
.hero{text-align:center;padding-top:2rem}
.icon{display:block;width:112px;height:112px;margin:0 auto;border-radius:25px;box-shadow:0 0 0 1px rgba(0,0,0,.06),0 4px 14px rgba(0,0,0,.14);object-fit:cover;background:#fff}
.placeholder{display:flex;align-items:center;justify-content:center;background:linear-gradient(135deg,#4c7dff,#7a4cff);color:#fff;font-size:52px;font-weight:600}
h1{font-size:1.6rem;line-height:1.25;margin:1rem 0 .3rem;word-break:break-word}
h2{font-size:1.05rem;margin:0 0 .75rem}
.subtitle{margin:0;color:var(--muted)}
.chips{display:flex;flex-wrap:wrap;justify-content:center;gap:.4rem;margin:.75rem 0 0;padding:0;list-style:none}
.chip{font-size:.8rem;line-height:1;padding:.4rem .65rem;border-radius:999px;background:#eef2f8;color:#354052}
.action{margin-top:1.5rem;display:grid;gap:.75rem;justify-items:center}
.button{display:inline-flex;align-items:center;justify-content:center;min-width:13rem;min-height:3.1rem;padding:.75rem 2.5rem;border:0;border-radius:999px;background:var(--accent);color:#fff;font:inherit;font-size:1.1rem;font-weight:600;text-decoration:none;cursor:pointer;box-shadow:0 6px 16px rgba(10,102,255,.28)}
.button:hover{background:var(--accent-dark)}
.hint{margin:0;color:var(--muted);font-size:.92rem;text-align:center}
.notice{margin:1rem 0 0;padding:.8rem 1rem;border-radius:12px;background:var(--warn-bg);border:1px solid var(--warn-line);font-size:.95rem;text-align:left}
.notice.bad{background:var(--bad-bg);border-color:var(--bad-line)}
.steps{margin-top:1.5rem;padding-top:1.25rem;border-top:1px solid var(--line);text-align:left}
.steps ol{margin:0;padding-left:1.3rem;display:grid;gap:.45rem}
.facts dl{margin:0}
.facts dl>div{display:flex;justify-content:space-between;align-items:baseline;gap:1rem;padding:.6rem 0;border-top:1px solid var(--line)}
.facts dl>div:first-child{border-top:0;padding-top:0}
.facts dt{color:var(--muted);flex:none}
.facts dd{margin:0;text-align:right;min-width:0;overflow-wrap:anywhere}
.facts .relative{display:block;color:var(--muted);font-size:.88rem}
.notes .body{overflow-wrap:anywhere}
.notes .body>:first-child{margin-top:0}.notes .body>:last-child{margin-bottom:0}
.notes .body p,.notes .body ul,.notes .body ol,.notes .body pre,.notes .body blockquote{margin:.6rem 0}
.notes .body ul,.notes .body ol{padding-left:1.3rem}
.notes .body h1,.notes .body h2,.notes .body h3,.notes .body h4{font-size:1rem;margin:1rem 0 .4rem}
.notes .body code{font:.9em ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:#eef2f8;padding:.1rem .3rem;border-radius:4px}
.notes .body pre{overflow-x:auto;background:#eef2f8;padding:.75rem;border-radius:8px}.notes .body pre code{background:none;padding:0}
.notes .body blockquote{padding-left:.8rem;border-left:3px solid var(--line);color:var(--muted)}
.notes .plain{white-space:pre-line}
.qr{margin:0;text-align:center}
.qr svg{display:block;width:220px;height:220px;margin:0 auto .5rem;background:#fff;border-radius:12px}
.qr figcaption{color:var(--muted);font-size:.9rem}
footer{display:flex;flex-wrap:wrap;justify-content:center;gap:.5rem 1.25rem;color:var(--muted);font-size:.9rem;text-align:center}
footer nav{display:flex;gap:.75rem}
footer a[aria-current]{color:var(--text);font-weight:600;text-decoration:none}
form{display:grid;gap:.6rem;margin-top:1.25rem;text-align:left}
label{font-weight:600}
input{width:100%;font:inherit;padding:.75rem .9rem;border:1px solid #c5cad3;border-radius:12px;background:#fff}
form .button{justify-self:center;margin-top:.5rem}
.lock{display:flex;align-items:center;justify-content:center;width:88px;height:88px;margin:0 auto;border-radius:24px;background:#eef2f8}
.lock svg{width:40px;height:40px}
.message{margin:1rem 0 0;color:var(--muted)}
.status{display:inline-block;margin-top:1rem;padding:.35rem .8rem;border-radius:999px;background:var(--bad-bg);color:#9b1c1c;font-size:.85rem;font-weight:600}
table{width:100%;border-collapse:collapse;text-align:left}
caption{text-align:left;color:var(--muted);padding:0 0 .5rem}
th,td{padding:.6rem .4rem;border-top:1px solid var(--line)}
th{font-size:.85rem;color:var(--muted);font-weight:600;border-top:0}
.state{font-size:.85rem;padding:.2rem .55rem;border-radius:999px;white-space:nowrap;background:#eef2f8;color:#354052}
.state-available{background:#e7f6ec;color:#146c2e}.state-password{background:#fff4dc;color:#7a4b00}
.state-expired,.state-disabled,.state-exhausted{background:#f1f2f4;color:#6b7280}
.overlay{position:fixed;inset:0;z-index:10;background:rgba(10,14,22,.95);-webkit-backdrop-filter:blur(6px);backdrop-filter:blur(6px);color:#fff;padding:5.5rem 1.75rem 2rem;text-align:left}
.overlay .arrow{position:absolute;top:.75rem;right:1.25rem;width:88px;height:88px}
.overlay h2{font-size:1.5rem;margin:0 0 .75rem}
.overlay p{font-size:1.05rem;margin:0}
.overlay .menu{display:inline-block;padding:0 .45rem;border-radius:6px;background:rgba(255,255,255,.18);font-weight:700;letter-spacing:.05em;white-space:nowrap}
@media (min-width:860px){
.page.wide{max-width:58rem;grid-template-columns:minmax(0,1fr) 19rem;align-items:start}
.page.wide>.qr{grid-column:2;grid-row:1 / span 3;position:sticky;top:1.5rem}
.page.wide>:not(.qr){grid-column:1}
.page{padding-top:3rem}
}
@media (prefers-color-scheme:dark){
:root{--bg:#0f1115;--card:#1a1d23;--text:#eef0f3;--muted:#a3aab5;--line:#2b3038;--warn-bg:#3a2e12;--warn-line:#8a6a22;--bad-bg:#3b1d1d;--bad-line:#8a3b3b}
.chip,.lock,.state,.notes .body code,.notes .body pre{background:#262a31;color:#d5d9e0}
.state-available{background:#173524;color:#8fd9a8}.state-password{background:#3a2e12;color:#f3c26b}
input{background:#111318;color:var(--text);border-color:#3a404a}
.status{color:#f3b2b2}
}
`;
