// The admin port's "/" page: one self-contained HTML file (inline CSS and JS,
// no external assets) that polls /status.json every 2 s. Every number on it is
// computed by the server (docs/SERVER.md "Dashboard"): traffic rates and
// latency percentiles over a window (server/traffic_window.h), so the first
// render already shows them; the serving version's rate histogram and expected
// kept fraction, and after a swap the comparison with the previous version
// (server/rate_profile.h); negative instances served with their rates and
// keep decisions. The page only formats them for people.
#include "server/admin_http.h"

namespace graphsieve {

const char* DashboardHtml() {
  return R"HTML(<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>graphsieve-server</title>
<style>
body{font-family:system-ui,sans-serif;margin:1.2em 1.5em;background:#fafafa;color:#222}
h1{font-size:1.3em;margin:0 0 .6em}
h2{font-size:1.05em;margin:1.3em 0 .5em}
.cards{display:flex;flex-wrap:wrap;gap:.7em;margin-bottom:.6em}
.card{background:#fff;border:1px solid #ddd;border-radius:6px;padding:.5em .8em;min-width:8.5em}
.card .k{font-size:.72em;color:#666;text-transform:uppercase;letter-spacing:.02em}
.card .v{font-size:1.25em;font-weight:600;margin-top:.15em;font-variant-numeric:tabular-nums}
.card .s{font-size:.75em;color:#666;margin-top:.1em}
.ok{color:#17803d}.bad{color:#b42318}.warn{color:#b54708}.muted{color:#888}
table{border-collapse:collapse;background:#fff;font-size:.85em}
td,th{border:1px solid #ddd;padding:.25em .5em;text-align:left;font-variant-numeric:tabular-nums}
.num{text-align:right}
.bar{display:flex;height:1.1em;border-radius:3px;overflow:hidden;background:#eee;width:24em}
.bar div{height:100%}
.panel{background:#fff;border:1px solid #ddd;border-radius:6px;padding:.6em .8em;display:inline-block;vertical-align:top;margin:0 .7em .7em 0}
svg text{font-size:10px;fill:#555}
</style></head><body>
<h1>graphsieve-server <span id="sv" style="font-weight:400;color:#666"></span></h1>
<div class="cards">
 <div class="card"><div class="k">state</div><div class="v" id="state">…</div></div>
 <div class="card"><div class="k">version</div><div class="v" id="ver">–</div><div class="s" id="pin"></div></div>
 <div class="card"><div class="k">snapshot age</div><div class="v" id="age">–</div></div>
 <div class="card"><div class="k">requests/s</div><div class="v" id="qps">–</div><div class="s" id="win"></div></div>
 <div class="card"><div class="k">pairs/s</div><div class="v" id="pps">–</div></div>
 <div class="card"><div class="k">errors/s</div><div class="v" id="eps">–</div></div>
 <div class="card"><div class="k">latency p50 / p99</div><div class="v" id="lat">–</div><div class="s" id="latnote"></div></div>
 <div class="card"><div class="k">in flight</div><div class="v" id="inflight">–</div></div>
</div>
<p>Where answers came from (last <span id="win2">60 s</span>): <span id="mixtext"></span></p>
<div class="bar" id="mix"></div>
<h2>Traffic, last 5 minutes</h2>
<svg id="spark" width="720" height="110" role="img" aria-label="pairs per second"></svg>
<h2>Rates of the serving version <span id="profver" class="muted"></span></h2>
<div class="panel"><svg id="hist" width="520" height="170" role="img" aria-label="rate histogram over pairs"></svg></div>
<div class="panel"><table id="profile"></table></div>
<div id="cmpbox" style="display:none">
<h2>Change from the previous version <span id="cmpvers" class="muted"></span></h2>
<div class="cards" id="cmpcards"></div>
<p class="muted" id="cmpnote"></p>
</div>
<div id="negbox" style="display:none">
<h2>Negative instances served (labelled requests, this version)</h2>
<div class="panel"><svg id="neghist" width="520" height="170" role="img" aria-label="rate histogram over negative instances"></svg></div>
<div class="panel"><table id="negtable"></table></div>
</div>
<h2>Snapshot</h2>
<table id="snap"></table>
<h2>Refresh history (newest first)</h2>
<table><thead><tr><th>at</th><th>version</th><th>ok</th><th>load</th><th>message</th></tr></thead>
<tbody id="hist_rows"></tbody></table>
<p id="rej"></p>
<script>
"use strict";
const $=id=>document.getElementById(id);
const NS=$("hist").namespaceURI;  // SVG's, from an element of the page
// Numbers for people: 3 significant digits, k/M/G suffixes, units.
function num(x){if(x==null||!isFinite(x))return "–";const a=Math.abs(x);
 if(a>=1e9)return (x/1e9).toPrecision(3)+" G";if(a>=1e6)return (x/1e6).toPrecision(3)+" M";
 if(a>=1e3)return (x/1e3).toPrecision(3)+" k";if(a===0)return "0";if(a>=1)return x.toPrecision(3).replace(/\.0+$/,"");
 return x.toPrecision(2);}
function count(n){return n==null?"–":Math.round(n).toLocaleString("en-US");}
function rate(r){return r==null?"–":Number(r).toFixed(3);}
function pct(f,d){return f==null?"–":(100*f).toFixed(d==null?1:d)+" %";}
function signed(x,d){return x==null?"–":(x>0?"+":x<0?"−":"±")+Math.abs(x).toFixed(d);}
function dur(s){if(s==null)return "–";if(s<1e-3)return Math.round(s*1e6)+" µs";if(s<1)return (s*1e3).toPrecision(3)+" ms";
 if(s<90)return s.toFixed(1)+" s";if(s<5400)return Math.round(s/60)+" min";if(s<172800)return (s/3600).toFixed(1)+" h";return (s/86400).toFixed(1)+" d";}
function esc(t){return String(t).replace(/[&<>"]/g,c=>({"&":"&amp;","<":"&lt;",">":"&gt;","\"":"&quot;"}[c]));}
function el(tag,attrs,text){const e=document.createElementNS(NS,tag);for(const k in attrs)e.setAttribute(k,attrs[k]);if(text!=null)e.textContent=text;return e;}
function rows(id,list){$(id).innerHTML=list.map(r=>`<tr><th>${esc(r[0])}</th><td class="num">${esc(r[1])}</td></tr>`).join("");}

function histogram(svg,edges,counts,color,unit){
 svg.innerHTML="";const W=+svg.getAttribute("width"),H=+svg.getAttribute("height"),L=46,B=22,T=8;
 const n=counts.length,total=counts.reduce((a,b)=>a+b,0),max=Math.max(1,...counts),bw=(W-L-6)/n;
 svg.appendChild(el("line",{x1:L,y1:H-B,x2:W-4,y2:H-B,stroke:"#999"}));
 svg.appendChild(el("text",{x:2,y:T+6},pct(max/Math.max(1,total),0)));
 svg.appendChild(el("text",{x:2,y:H-B},"0 %"));
 counts.forEach((c,i)=>{const h=(H-B-T)*c/max;const r=el("rect",{x:L+i*bw+1,y:H-B-h,width:Math.max(1,bw-2),height:h,fill:color,"data-count":c});
  r.appendChild(el("title",{},`rate ≤ ${edges[i].toFixed(2)}: ${count(c)} ${unit} (${pct(c/Math.max(1,total))})`));svg.appendChild(r);});
 for(let i=0;i<=n;i+=n/4){svg.appendChild(el("text",{x:L+i*bw-8,y:H-6},(i/n).toFixed(2)));}
 svg.appendChild(el("text",{x:W-90,y:T+6},"sampling rate →"));}

function spark(svg,series){
 svg.innerHTML="";const W=+svg.getAttribute("width"),H=+svg.getAttribute("height");
 if(!series||series.length<2){svg.appendChild(el("text",{x:6,y:20},"collecting samples…"));return;}
 const max=Math.max(1,...series.map(p=>p.pairs_per_second||0)),t0=Math.min(-300,series[0].t);
 let d="";series.forEach((p,i)=>{const x=4+(W-8)*(p.t-t0)/(-t0),y=H-14-(H-28)*(p.pairs_per_second||0)/max;d+=(i?"L":"M")+x.toFixed(1)+","+y.toFixed(1);});
 svg.appendChild(el("path",{d:d,fill:"none",stroke:"#2563eb","stroke-width":1.5}));
 svg.appendChild(el("text",{x:6,y:11},"max "+num(max)+" pairs/s"));
 svg.appendChild(el("text",{x:6,y:H-2},"5 min ago"));svg.appendChild(el("text",{x:W-30,y:H-2},"now"));}

function traffic(s){
 const t=s.traffic||{},lat=t.latency||{};
 $("qps").textContent=num(t.requests_per_second);$("pps").textContent=num(t.pairs_per_second);
 $("eps").textContent=num(t.errors_per_second);$("eps").className=t.errors_per_second>0?"v bad":"v";
 const w=t.window_seconds==null?"window filling":"over "+Math.round(t.window_seconds)+" s";$("win").textContent=w;
 $("win2").textContent=t.window_seconds==null?"–":Math.round(t.window_seconds)+" s";
 if(lat.calls>0){$("lat").textContent=dur(lat.p50_seconds)+" / "+(lat.p99_above_last_bucket?"> ":"")+dur(lat.p99_seconds);
  $("latnote").textContent=count(lat.calls)+" calls, mean "+dur(lat.mean_seconds);}
 else{$("lat").textContent="idle";$("latnote").textContent="no calls in the window";}
 $("inflight").textContent=count((s.metrics||{}).inflight);
 const colors={exact:"#17803d",inferred:"#2563eb",default:"#d97706"},sh=t.source_share||{};let bar="",txt=[];
 for(const k of ["exact","inferred","default"]){const f=sh[k];if(f>0)bar+=`<div style="width:${100*f}%;background:${colors[k]}" title="${k}"></div>`;
  txt.push(`<span style="color:${colors[k]}">${k} ${pct(f)}</span>`);}
 $("mix").innerHTML=bar;$("mixtext").innerHTML=t.pairs_per_second>0?txt.join(" · "):"no pairs in the window";
 spark($("spark"),t.series);}

function profile(s){
 const p=s.rate_profile;
 if(!p){$("profver").textContent=s.rate_profile_state||"";$("hist").innerHTML="";rows("profile",[]);return;}
 $("profver").textContent=p.version;
 histogram($("hist"),p.bin_upper_edges,p.pair_counts,"#2563eb","pairs");
 rows("profile",[["pairs",count(p.pairs)],["mean rate over pairs",rate(p.mean_rate)],["median / p99 rate",rate(p.p50_rate)+" / "+rate(p.p99_rate)],
  ["min / max rate",rate(p.min_rate)+" / "+rate(p.max_rate)],["expected kept fraction of negatives",pct(p.expected_kept_fraction)],
  ["target (alpha)",pct(p.alpha)],["negative instances in the log",count(p.negative_instances)],
  ["expected kept negatives",count(p.expected_kept_fraction*p.negative_instances)]]);}

function card(k,v,sub,cls){return `<div class="card"><div class="k">${esc(k)}</div><div class="v ${cls||""}">${esc(v)}</div><div class="s">${esc(sub||"")}</div></div>`;}
function comparison(s){
 const c=s.comparison;$("cmpbox").style.display=c?"":"none";if(!c)return;
 const lim=s.comparison_limits||{};const flag=(x,l)=>l==null?"":(x>l?"warn":"ok");
 $("cmpvers").textContent=c.from_version+" → "+c.to_version;
 $("cmpcards").innerHTML=card("Δ mean rate",signed(c.mean_delta,4),rate(c.mean_rate_from)+" → "+rate(c.mean_rate_to),flag(Math.abs(c.mean_delta),lim.max_mean_delta))+
  card("mean |Δ rate|",c.mean_abs_delta.toFixed(4),"p99 "+c.p99_abs_delta.toFixed(3)+", max "+c.max_abs_delta.toFixed(3),flag(c.mean_abs_delta,lim.max_mean_delta))+
  card("pairs moved > "+c.threshold,pct(c.fraction_moved,2),count(Math.round(c.fraction_moved*c.pairs_compared))+" of "+count(c.pairs_compared),flag(c.fraction_moved,lim.max_fraction_over))+
  card("KS distance",c.ks_distance.toFixed(3),"of the two rate distributions",flag(c.ks_distance,lim.max_ks))+
  card("expected kept fraction",pct(c.expected_kept_fraction_to),"was "+pct(c.expected_kept_fraction_from));
 $("cmpnote").textContent=(c.sample_bits>0?"On a hash sample of 1 in "+count(2**c.sample_bits)+" pairs; ":"On every pair ")+
  "stored in both versions ("+count(c.pairs_only_from)+" only in the old one, "+count(c.pairs_only_to)+" only in the new one). "+
  "Amber = above the canary's default limit (graphsieve canary).";}

function negatives(s){
 const n=s.negatives_served,show=n&&n.instances>0&&s.active&&n.version===s.active.version;
 $("negbox").style.display=show?"":"none";if(!show)return;
 histogram($("neghist"),n.bin_upper_edges,n.instance_counts,"#7c3aed","negative instances");
 rows("negtable",[["negative instances",count(n.instances)],["mean rate (expected kept fraction)",pct(n.mean_rate)],["kept",count(n.kept)+" ("+pct(n.kept/n.instances)+")"]]);}

function rule(a){if(!a.rate_rule)return "–";
 const parts=[a.rate_rule];if(a.rate_rule==="mixture"&&a.kappa!=null)parts.push("κ "+a.kappa);
 if(a.score_power!=null)parts.push("β "+a.score_power);if(a.score_propagation!=null)parts.push(a.score_propagation?"score propagation":"no score propagation");
 return parts.join(", ");}

function tuned(a){if(!a.version)return "–";const t=a.tune;if(!t||!t.rule)return "not tuned (flags given by hand)";
 return t.rule.replace(/,/g," ")+" (tuned "+(t.date||"?")+", report "+(t.report_digest||"?")+")";}

function update(s){
 $("sv").textContent=s.server_version||"";
 const st=$("state");st.textContent=s.draining?"draining":(s.serving?"serving":"no snapshot");st.className="v "+(s.serving&&!s.draining?"ok":"bad");
 $("ver").textContent=s.active?s.active.version:"–";$("pin").textContent=s.pinned_version?"pinned":"following CURRENT";
 $("age").textContent=s.active&&s.snapshot_age_seconds!=null?dur(s.snapshot_age_seconds):"–";
 traffic(s);profile(s);comparison(s);negatives(s);
 const a=s.active||{},m=s.metrics||{refresh:{}};
 rows("snap",[["method",a.method],["resistance",a.resistance],["alpha / floor / gamma",[a.alpha,a.floor,a.gamma].map(rate).join(" / ")],["rate rule",rule(a)],["rule in force",tuned(a)],
  ["pairs / users / items",[a.pairs,a.users,a.items].map(count).join(" / ")],["instances",count(a.instances)],
  ["achieved negative mean rate",rate(a.achieved_negative_mean_rate)],["created at",a.created_at||"–"],
  ["CURRENT on disk",s.current_error?"UNREADABLE: "+s.current_error:(s.current_on_disk||"–")],["versions on disk",(s.versions_on_disk||[]).join(", ")||"–"],
  ["default policy",s.default_policy],["refreshes ok / failed",count(m.refresh.success)+" / "+count(m.refresh.failure)]]);
 $("hist_rows").innerHTML=(s.refresh_history||[]).slice().reverse().map(e=>
  `<tr><td>${esc(e.at)}</td><td>${esc(e.version)}</td><td class="${e.ok?"ok":"bad"}">${e.ok?"ok":"FAILED"}</td><td class="num">${dur(e.load_seconds||0)}</td><td>${esc(e.message)}</td></tr>`).join("");
 $("rej").textContent=(s.rejected_versions||[]).length?"Rejected (never re-adopted): "+s.rejected_versions.join(", "):"";}

async function poll(){try{const r=await fetch("status.json",{cache:"no-store"});update(await r.json());}
 catch(e){$("state").textContent="unreachable";$("state").className="v bad";}}
poll();setInterval(poll,2000);
</script></body></html>
)HTML";
}

}  // namespace graphsieve
