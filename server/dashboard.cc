// The admin port's "/" page: one self-contained HTML file (inline CSS and JS,
// no external assets) that polls /status.json every 2 s and shows the serving
// version, its age, QPS and pairs/s, the source mix, latency and the refresh
// history. Rates are computed in the page from counter deltas.
#include "server/admin_http.h"

namespace graphsieve {

const char* DashboardHtml() {
  return R"HTML(<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>graphsieve-server</title>
<style>
body{font-family:system-ui,sans-serif;margin:1.5em;background:#fafafa;color:#222}
h1{font-size:1.3em;margin:0 0 .6em}
.cards{display:flex;flex-wrap:wrap;gap:.8em;margin-bottom:1em}
.card{background:#fff;border:1px solid #ddd;border-radius:6px;padding:.6em .9em;min-width:9em}
.card .k{font-size:.75em;color:#666;text-transform:uppercase}
.card .v{font-size:1.3em;font-weight:600;margin-top:.2em}
.ok{color:#17803d}.bad{color:#b42318}
table{border-collapse:collapse;background:#fff;font-size:.85em;width:100%}
td,th{border:1px solid #ddd;padding:.25em .5em;text-align:left}
.bar{display:flex;height:1.1em;border-radius:3px;overflow:hidden;background:#eee;width:24em}
.bar div{height:100%}
canvas{background:#fff;border:1px solid #ddd;border-radius:6px}
</style></head><body>
<h1>graphsieve-server <span id="sv" style="font-weight:400;color:#666"></span></h1>
<div class="cards">
 <div class="card"><div class="k">state</div><div class="v" id="state">…</div></div>
 <div class="card"><div class="k">version</div><div class="v" id="ver">–</div></div>
 <div class="card"><div class="k">snapshot age</div><div class="v" id="age">–</div></div>
 <div class="card"><div class="k">pinned</div><div class="v" id="pin">–</div></div>
 <div class="card"><div class="k">requests/s</div><div class="v" id="qps">–</div></div>
 <div class="card"><div class="k">pairs/s</div><div class="v" id="pps">–</div></div>
 <div class="card"><div class="k">mean latency</div><div class="v" id="lat">–</div></div>
 <div class="card"><div class="k">p99 latency (≤)</div><div class="v" id="p99">–</div></div>
 <div class="card"><div class="k">errors/s</div><div class="v" id="eps">–</div></div>
</div>
<p>Source mix (pairs since last poll): <span id="mixtext"></span></p>
<div class="bar" id="mix"></div>
<p>pairs/s, last 5 minutes</p>
<canvas id="chart" width="720" height="120"></canvas>
<h2 style="font-size:1.05em">Snapshot</h2>
<table id="snap"></table>
<h2 style="font-size:1.05em">Refresh history (newest first)</h2>
<table><thead><tr><th>at</th><th>version</th><th>ok</th><th>load s</th><th>message</th></tr></thead>
<tbody id="hist"></tbody></table>
<p id="rej"></p>
<script>
"use strict";
let prev=null;const series=[];
const $=id=>document.getElementById(id);
function fmt(x){if(x>=1e6)return (x/1e6).toFixed(2)+"M";if(x>=1e3)return (x/1e3).toFixed(1)+"k";return x.toFixed(1);}
function dur(s){if(s<0.001)return (s*1e6).toFixed(0)+" µs";if(s<1)return (s*1e3).toFixed(2)+" ms";if(s<3600)return s.toFixed(1)+" s";return (s/3600).toFixed(1)+" h";}
function esc(t){return String(t).replace(/[&<>"]/g,c=>({"&":"&amp;","<":"&lt;",">":"&gt;","\"":"&quot;"}[c]));}
function draw(){const c=$("chart"),g=c.getContext("2d");g.clearRect(0,0,c.width,c.height);
 if(series.length<2)return;const m=Math.max(1,...series);g.strokeStyle="#2563eb";g.beginPath();
 series.forEach((v,i)=>{const x=i*(c.width-1)/149,y=c.height-4-(v/m)*(c.height-14);i?g.lineTo(x,y):g.moveTo(x,y);});
 g.stroke();g.fillStyle="#666";g.fillText(fmt(m)+" pairs/s",4,10);}
function update(s){
 $("sv").textContent=s.server_version||"";
 const st=$("state");st.textContent=s.draining?"draining":(s.serving?"serving":"no snapshot");
 st.className=s.serving&&!s.draining?"ok":"bad";
 $("ver").textContent=s.active?s.active.version:"–";
 $("age").textContent=s.active&&s.snapshot_age_seconds!=null?dur(s.snapshot_age_seconds):"–";
 $("pin").textContent=s.pinned_version||"no";
 const m=s.metrics,now=Date.now()/1000;
 if(prev){const dt=Math.max(1e-3,now-prev.t),pm=prev.m;
  const dreq=m.requests_ok-pm.requests_ok,derr=m.requests_failed-pm.requests_failed;
  const dp={};let tot=0;for(const k of ["exact","inferred","default"]){dp[k]=m.pairs[k]-pm.pairs[k];tot+=dp[k];}
  $("qps").textContent=fmt((dreq+derr)/dt);$("pps").textContent=fmt(tot/dt);$("eps").textContent=fmt(derr/dt);
  series.push(tot/dt);if(series.length>150)series.shift();draw();
  const dc=m.latency.count-pm.latency.count,ds=m.latency.sum_seconds-pm.latency.sum_seconds;
  $("lat").textContent=dc>0?dur(ds/dc):"–";
  if(dc>0){let p99="> 1 s";for(let i=0;i<m.latency.buckets.length;i++){const b=m.latency.buckets[i],pb=pm.latency.buckets[i];
    if(b.count-pb.count>=0.99*dc){p99=b.le==null?"> 1 s":dur(b.le);break;}}$("p99").textContent=p99;}
  const colors={exact:"#17803d",inferred:"#2563eb",default:"#d97706"};let bar="",txt=[];
  for(const k in dp){if(tot>0&&dp[k]>0)bar+=`<div style="width:${100*dp[k]/tot}%;background:${colors[k]}" title="${k}"></div>`;
   txt.push(`<span style="color:${colors[k]}">${k} ${tot>0?(100*dp[k]/tot).toFixed(1):"0"}%</span>`);}
  $("mix").innerHTML=bar;$("mixtext").innerHTML=txt.join(" · ");}
 prev={t:now,m:m};
 const a=s.active||{};const rows=[["method",a.method],["resistance",a.resistance],["alpha",a.alpha],["floor",a.floor],
  ["gamma",a.gamma],["pairs",a.pairs],["users",a.users],["items",a.items],["instances",a.instances],
  ["achieved negative mean rate",a.achieved_negative_mean_rate],["created at",a.created_at],
  ["CURRENT on disk",s.current_on_disk],["versions on disk",(s.versions_on_disk||[]).join(", ")],
  ["default policy",s.default_policy],["refreshes ok / failed",m.refresh.success+" / "+m.refresh.failure]];
 $("snap").innerHTML=rows.map(r=>`<tr><th>${esc(r[0])}</th><td>${esc(r[1]==null?"–":r[1])}</td></tr>`).join("");
 $("hist").innerHTML=(s.refresh_history||[]).slice().reverse().map(e=>
  `<tr><td>${esc(e.at)}</td><td>${esc(e.version)}</td><td class="${e.ok?"ok":"bad"}">${e.ok?"ok":"FAILED"}</td><td>${(e.load_seconds||0).toFixed(3)}</td><td>${esc(e.message)}</td></tr>`).join("");
 $("rej").textContent=(s.rejected_versions||[]).length?"Rejected (never re-adopted): "+s.rejected_versions.join(", "):"";
}
async function poll(){try{const r=await fetch("status.json",{cache:"no-store"});update(await r.json());}
 catch(e){$("state").textContent="unreachable";$("state").className="bad";}}
poll();setInterval(poll,2000);
</script></body></html>
)HTML";
}

}  // namespace graphsieve
