/**
 * The dashboard's only stylesheet and script, served from /app/assets/ (the CSP allows 'self' and
 * nothing inline). Plain CSS and plain browser JavaScript: no build step, and every page works with
 * JavaScript off except what it enhances (copy buttons, relative times, confirmations, live lists).
 */
export const APP_CSS = `
:root{--bg:#f7f7f8;--fg:#17181c;--muted:#5d6169;--line:#dcdde1;--card:#fff;--accent:#3b4cca;--accent-fg:#fff;
--ok:#17663a;--ok-bg:#e3f4ea;--warn:#7a4d00;--warn-bg:#fdf1d8;--bad:#a11c1c;--bad-bg:#fbe4e4;--radius:8px;
font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
*{box-sizing:border-box}body{margin:0}
a{color:var(--accent)}a:focus-visible,button:focus-visible,input:focus-visible,select:focus-visible,textarea:focus-visible,pre:focus-visible{outline:3px solid #8a96f0;outline-offset:2px}
.skip{position:absolute;left:-999px}.skip:focus{left:8px;top:8px;background:#fff;padding:6px;z-index:9}
.top{display:flex;flex-wrap:wrap;align-items:center;gap:12px 20px;padding:10px 20px;background:#fff;border-bottom:1px solid var(--line)}
.brand{font-weight:700;text-decoration:none;color:var(--fg);font-size:17px}
.top nav ul{display:flex;flex-wrap:wrap;gap:4px 14px;list-style:none;margin:0;padding:0}
.top nav a{text-decoration:none;color:var(--muted);padding:4px 2px}.top nav a[aria-current=page]{color:var(--fg);border-bottom:2px solid var(--accent)}
.signout{margin-left:auto;display:flex;gap:8px;align-items:center}.who{color:var(--muted);font-size:13px}
main{max-width:1100px;margin:0 auto;padding:20px}
h1{font-size:22px;margin:0 0 14px}h2{font-size:17px;margin:22px 0 10px}
.card{background:var(--card);border:1px solid var(--line);border-radius:var(--radius);padding:16px;margin:0 0 16px}
table{width:100%;border-collapse:collapse;background:var(--card);border:1px solid var(--line);border-radius:var(--radius)}
th,td{text-align:left;padding:8px 10px;border-bottom:1px solid var(--line);vertical-align:top}th{font-size:13px;color:var(--muted);font-weight:600}
tr:last-child td{border-bottom:0}
.table-wrap{overflow-x:auto}
label{display:block;font-weight:600;margin:10px 0 4px}.help{color:var(--muted);font-size:13px;font-weight:400}
input[type=text],input[type=email],input[type=url],input[type=number],input[type=search],input:not([type]),select,textarea{width:100%;max-width:520px;padding:7px 9px;border:1px solid #b9bbc2;border-radius:6px;font:inherit;background:#fff;color:var(--fg)}
textarea{max-width:100%;min-height:120px;font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:13px}
button,.button{display:inline-block;padding:7px 14px;border-radius:6px;border:1px solid var(--accent);background:var(--accent);color:var(--accent-fg);font:inherit;cursor:pointer;text-decoration:none}
button.secondary,.button.secondary{background:#fff;color:var(--accent)}button.danger{background:var(--bad);border-color:var(--bad)}
button.link{background:none;border:0;color:var(--accent);padding:0;text-decoration:underline}
.row{display:flex;flex-wrap:wrap;gap:10px;align-items:flex-end}.row>*{flex:0 1 auto}
.filters{display:flex;flex-wrap:wrap;gap:10px;align-items:flex-end;margin:0 0 14px}.filters label{margin:0 0 4px;font-size:13px}
.filters select,.filters input{width:auto;min-width:150px}
.muted{color:var(--muted)}.mono,code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:13px}
pre{white-space:pre-wrap;word-break:break-word;background:#f0f1f4;padding:10px;border-radius:6px;margin:0}
.copyable{display:flex;gap:8px;align-items:flex-start;margin:6px 0}.copyable pre,.copyable code{flex:1;overflow-x:auto}
.badge{display:inline-block;padding:1px 8px;border-radius:99px;font-size:12px;font-weight:600;background:#eceef2;color:#333}
.badge-received,.badge-sent,.badge-delivered,.badge-healthy,.badge-enabled,.badge-verified{background:var(--ok-bg);color:var(--ok)}
.badge-quarantined,.badge-pending,.badge-retrying,.badge-sending,.badge-failing{background:var(--warn-bg);color:var(--warn)}
.badge-spam,.badge-dead,.badge-failed,.badge-disabled,.badge-rejected{background:var(--bad-bg);color:var(--bad)}
.notice{background:var(--ok-bg);color:var(--ok);padding:8px 12px;border-radius:6px}
.banner{background:#fff4d6;color:#5a3d00;border:1px solid #e0b84c;padding:8px 12px;border-radius:6px}
.banner a{color:#5a3d00;font-weight:600}
.error{background:var(--bad-bg);color:var(--bad);padding:8px 12px;border-radius:6px;margin:0 0 12px}.error p{margin:4px 0}.hint{color:#5a1010;font-size:13px}
.field-error{color:var(--bad);font-size:13px;margin:2px 0}
.empty{background:#fff;border:1px dashed #b9bbc2;border-radius:var(--radius);padding:20px;text-align:left}
.pager{display:flex;gap:12px;margin:12px 0}
dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:4px 14px;margin:0}dl.meta dt{color:var(--muted)}dl.meta dd{margin:0;word-break:break-word}
@media (max-width:640px){main{padding:12px}th,td{padding:6px}.signout{margin-left:0}.filters select,.filters input{min-width:0;width:100%}}
`;

export const APP_JS = `
(function(){
  'use strict';
  function rel(d){var s=Math.round((Date.now()-d.getTime())/1000);
    if(s<45&&s>-45)return 'just now';if(s<0)return d.toISOString().slice(0,16).replace('T',' ');
    if(s<3600)return Math.round(s/60)+' min ago';if(s<86400)return Math.round(s/3600)+' h ago';
    if(s<2592000)return Math.round(s/86400)+' d ago';return d.toISOString().slice(0,10);}
  function times(root){(root||document).querySelectorAll('time[data-rel]').forEach(function(t){var d=new Date(t.getAttribute('datetime'));if(!isNaN(d))t.textContent=rel(d);});}
  document.addEventListener('click',function(e){
    var b=e.target.closest&&e.target.closest('button[data-copy]');if(!b)return;
    var el=document.getElementById(b.getAttribute('data-copy'));if(!el)return;
    var text=el.textContent||'';var old=b.textContent;
    function ok(){b.textContent='Copied';setTimeout(function(){b.textContent=old;},1500);}
    if(navigator.clipboard&&navigator.clipboard.writeText){navigator.clipboard.writeText(text).then(ok,function(){sel(el);});}else{sel(el);}
  });
  function sel(el){var r=document.createRange();r.selectNodeContents(el);var s=window.getSelection();s.removeAllRanges();s.addRange(r);}
  document.addEventListener('submit',function(e){var f=e.target;var q=f.getAttribute&&f.getAttribute('data-confirm');if(q&&!window.confirm(q))e.preventDefault();});
  // Live regions: <tbody data-poll="/app/…/rows?…" data-poll-ms="5000"> is replaced by the server's fresh rows;
  // a redirect (the session ended: sign-in) is an error, so the sign-in page never lands in a table.
  function poll(el){var url=el.getAttribute('data-poll');var ms=+el.getAttribute('data-poll-ms')||5000;
    setTimeout(function tick(){if(document.hidden){setTimeout(tick,ms);return;}
      fetch(url,{credentials:'same-origin',redirect:'error',headers:{'accept':'text/html'}}).then(function(r){if(!r.ok)throw 0;return r.text();})
      .then(function(html){if(html!==el.getAttribute('data-last')){el.innerHTML=html;el.setAttribute('data-last',html);times(el);}})
      .catch(function(){}).then(function(){setTimeout(tick,ms);});},ms);}
  document.addEventListener('DOMContentLoaded',function(){times();setInterval(times,30000);document.querySelectorAll('[data-poll]').forEach(poll);});
})();
`;
