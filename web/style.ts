import { createHash } from 'node:crypto';

/**
 * The one stylesheet of the server's own pages, inlined in each page and allowed by the CSP through its hash
 * (so the pages need neither 'unsafe-inline' nor an extra request).
 */
export const PAGE_CSS = `
:root{color-scheme:light dark;--fg:#1d2125;--muted:#5b636b;--bg:#f6f7f9;--card:#fff;--line:#d9dde2;--accent:#0b6e4f;--bad:#b42318;--warn:#9a6700;--ok:#1a7f37}
@media (prefers-color-scheme:dark){:root{--fg:#e6e8eb;--muted:#a3abb4;--bg:#15181b;--card:#1e2226;--line:#363c43;--accent:#3fb98a;--bad:#ff7b72;--warn:#d29922;--ok:#3fb950}}
*{box-sizing:border-box}
body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
header{display:flex;align-items:center;justify-content:space-between;gap:1rem;padding:.75rem 1.5rem;background:var(--card);border-bottom:1px solid var(--line)}
header h1{font-size:1.2rem;margin:0}
main{max-width:1100px;margin:0 auto;padding:1rem 1.5rem 3rem}
section,fieldset{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:1rem 1.25rem;margin:1rem 0}
fieldset legend{font-weight:600;padding:0 .3rem}
h2{font-size:1.05rem;margin:.2rem 0 .6rem}
label{display:block;font-weight:600;margin:.6rem 0 .2rem}
.hint{color:var(--muted);font-size:.88rem;margin:.15rem 0}
input[type=text],input[type=password],input[type=number],select,textarea{width:100%;max-width:36rem;padding:.4rem .5rem;font:inherit;color:inherit;background:var(--bg);border:1px solid var(--line);border-radius:5px}
textarea{min-height:2.6rem;font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.88rem}
[aria-invalid=true]{border-color:var(--bad);outline:1px solid var(--bad)}
button{font:inherit;padding:.4rem .9rem;border-radius:5px;border:1px solid var(--accent);background:var(--accent);color:#fff;cursor:pointer}
button.secondary{background:transparent;color:var(--accent)}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(16rem,1fr));gap:0 1.5rem}
table{border-collapse:collapse;width:100%;font-size:.92rem}
th,td{text-align:left;vertical-align:top;padding:.35rem .5rem;border-bottom:1px solid var(--line)}
th{color:var(--muted);font-weight:600}
.plugin td textarea{max-width:none}
.ok{color:var(--ok)}.bad{color:var(--bad)}.warn{color:var(--warn)}.off{color:var(--muted)}
.notice{padding:.7rem 1rem;border-radius:6px;margin:1rem 0;border:1px solid var(--line);background:var(--card)}
.notice.ok{border-color:var(--ok)}.notice.warn{border-color:var(--warn)}.notice.error{border-color:var(--bad)}
.field-error{color:var(--bad);font-size:.88rem;margin:.2rem 0}
.own-ids{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center;margin:.4rem 0}
code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.88rem}
meter{width:12rem}
.login{max-width:26rem;margin:12vh auto}
.qr{text-align:center}.qr svg{background:#fff;border-radius:8px;max-width:90vw;height:auto}
body{overflow-wrap:anywhere}
a{color:var(--accent)}
header{flex-wrap:wrap}
header nav ul{display:flex;flex-wrap:wrap;gap:.25rem .9rem;list-style:none;margin:0;padding:0}
header nav a{text-decoration:none;padding:.2rem 0}header nav a[aria-current=page]{font-weight:700;border-bottom:2px solid var(--accent)}
.skip{position:absolute;left:-999px}.skip:focus{left:.5rem;top:.5rem;background:var(--card);padding:.3rem .6rem;z-index:2}
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.view-title{font-size:1.15rem;margin:1rem 0 .2rem}
h3{font-size:1rem;margin:.8rem 0 .4rem}h4{font-size:.98rem;margin:0 0 .3rem}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,20rem),1fr));gap:1rem}
.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:.9rem 1rem}
.plugin-card fieldset{margin:.6rem 0;padding:.5rem .8rem}
.plugin-list{display:grid;gap:.6rem}
details.plugin-card>summary{cursor:pointer;display:flex;flex-wrap:wrap;align-items:baseline;gap:.2rem .8rem;list-style-position:inside}
details.plugin-card>summary h3{display:inline;margin:0}details.plugin-card[open]>summary{margin-bottom:.4rem}
fieldset.nested{margin:.6rem 0;padding:.4rem .7rem;background:transparent}
pre.value{margin:.2rem 0;padding:.3rem .5rem;background:var(--bg);border-radius:5px;white-space:pre-wrap;font-size:.85rem}
.option .label{display:block;font-weight:600;margin:.6rem 0 .2rem}
label.inline{display:inline-flex;gap:.4rem;align-items:center;font-weight:600}
.facts{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem;margin:.5rem 0}.facts dt{color:var(--muted)}.facts dd{margin:0}
ul.plain{list-style:none;padding:0;margin:.3rem 0}
button.danger{background:var(--bad);border-color:var(--bad)}
:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
.log{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.85rem;list-style:none;padding:0;margin:.5rem 0}.log li{border-bottom:1px solid var(--line);padding:.2rem 0}
.code{font-family:ui-monospace,monospace;letter-spacing:.15em}
@media (max-width:640px){header,main{padding-left:.8rem;padding-right:.8rem}
table,thead,tbody,tr,th,td{display:block;width:100%}thead{position:absolute;left:-999px}tr{border-bottom:1px solid var(--line);padding:.35rem 0}td{border:0;padding:.1rem 0}
section,fieldset{padding:.8rem}}
`;

/** The CSP source expression that allows exactly PAGE_CSS. */
export const PAGE_CSS_HASH = `'sha256-${createHash('sha256').update(PAGE_CSS, 'utf8').digest('base64')}'`;
