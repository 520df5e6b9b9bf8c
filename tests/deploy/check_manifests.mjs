// Offline checks of deploy/ (run by tests/deploy/run_checks.sh, CTest deploy_checks).
//
//   node check_manifests.mjs manifests RENDERED.yaml DOCKERFILE SERVER_HELP BUILD_HELP
//       Every object of `kubectl kustomize deploy/k8s` against the Kubernetes API
//       schemas bundled in npm's kubernetes-models (types, enums, required fields),
//       plus unknown fields (a typo such as `fsgroup` is not an error for the bundled
//       validators, so the declared fields of each type are read from the package's
//       type declarations), plus the deployment rules of docs/DEPLOY.md "Kubernetes".
//   node check_manifests.mjs prometheus-sd PROMETHEUS.yml OUT_STATIC.yml
//       Checks the kubernetes_sd_configs blocks and writes a copy with each replaced by
//       an equivalent static_configs block, for promtool (Debian's has no Kubernetes SD).
//   node check_manifests.mjs grafana DASHBOARD.json OUT_RULES.yml
//       Writes every PromQL expression of the dashboard as a recording rule, for
//       `promtool check rules`.
//   node check_manifests.mjs self-test RENDERED.yaml DOCKERFILE SERVER_HELP BUILD_HELP
//       Breaks the rendered objects one way at a time and fails unless each break is
//       reported (so the checks above can fail, and for the reason they name).
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import YAML from "yaml";

const require = createRequire(import.meta.url);
const MODELS = path.dirname(require.resolve("kubernetes-models/package.json"));

// ---- schema validation (kubernetes-models) ----------------------------------

function modelFile(apiVersion, kind) {
  const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : ["", apiVersion];
  return path.join(MODELS, group, version, kind);
}

function schemaErrors(obj) {
  const file = modelFile(obj.apiVersion, obj.kind);
  if (!fs.existsSync(file + ".js")) return [`no schema for ${obj.apiVersion} ${obj.kind}`];
  const Model = require(file)[obj.kind];
  try {
    new Model(obj).validate();
    return [];
  } catch (e) {
    return [String(e.message)];
  }
}

// ---- unknown fields, from the type declarations (.d.ts) ----------------------

const declCache = new Map();
// Parses `export interface IName { "field"?: Type; ... }` of a .d.ts file.
function parseDecl(file) {
  if (declCache.has(file)) return declCache.get(file);
  const text = fs.readFileSync(file, "utf8").replace(/\/\*\*[\s\S]*?\*\//g, "");
  const imports = new Map();
  for (const m of text.matchAll(/import \{ ([^}]+) \} from "([^"]+)";/g)) {
    for (const name of m[1].split(",")) imports.set(name.trim(), m[2]);
  }
  const body = text.match(/export interface \w+(?: extends [\w, ]+)? \{\n([\s\S]*?)\n\}/);
  const fields = new Map();
  if (body) {
    // Top-level members start with 4 spaces and a quoted name; types may span lines.
    const parts = body[1].split(/\n(?= {4}")/);
    for (const part of parts) {
      const m = part.match(/^ {4}"([^"]+)"\??: ([\s\S]*);\s*$/);
      if (m) fields.set(m[1], m[2].replace(/\s+/g, " ").trim());
    }
  }
  const decl = { fields, imports, dir: path.dirname(file) };
  declCache.set(file, decl);
  return decl;
}

function resolveImport(decl, name) {
  const spec = decl.imports.get(name);
  if (!spec) return null;
  const file = spec.startsWith(".") ? path.join(decl.dir, spec + ".d.ts") : require.resolve(spec).replace(/\.js$/, ".d.ts");
  return fs.existsSync(file) ? file : null;
}

// Walks `value` as declared type `type` (a type expression of `decl`).
function unknownFields(value, type, decl, where, out) {
  if (value === null || value === undefined) return;
  let m;
  if ((m = type.match(/^Array<(.+)>$/))) {
    if (Array.isArray(value)) value.forEach((v, i) => unknownFields(v, m[1], decl, `${where}[${i}]`, out));
    return;
  }
  if ((m = type.match(/^\{ \[key: string\]: (.+); \}$/))) {
    if (typeof value === "object") for (const [k, v] of Object.entries(value)) unknownFields(v, m[1], decl, `${where}.${k}`, out);
    return;
  }
  if (/^I\w+$/.test(type) && typeof value === "object" && !Array.isArray(value)) {
    const file = resolveImport(decl, type);
    if (file) checkObject(value, parseDecl(file), where, out);
  }
}

function checkObject(value, decl, where, out) {
  if (decl.fields.size === 0) return;  // opaque types (Quantity, IntOrString, Time...)
  for (const [k, v] of Object.entries(value)) {
    const type = decl.fields.get(k);
    if (type === undefined) {
      out.push(`unknown field ${where ? where + "." : ""}${k} (not in the ${path.basename(path.dirname(decl.dir))} API)`);
      continue;
    }
    unknownFields(v, type, decl, where ? `${where}.${k}` : k, out);
  }
}

function strictErrors(obj) {
  const file = modelFile(obj.apiVersion, obj.kind) + ".d.ts";
  if (!fs.existsSync(file)) return [];
  const out = [];
  checkObject(obj, parseDecl(file), "", out);
  return out;
}

// ---- the deployment rules ----------------------------------------------------

function podSpecs(objects) {
  const out = [];
  for (const o of objects) {
    if (o.kind === "Deployment") out.push([o, o.spec.template]);
    if (o.kind === "CronJob") out.push([o, o.spec.jobTemplate.spec.template]);
  }
  return out;
}

function flagValue(args, name) {
  for (const a of args || []) {
    if (a.startsWith(`--${name}=`)) return a.slice(name.length + 3);
  }
  return undefined;
}

// A delta build (--delta-of) must run with its base's result-affecting flags: the
// builder refuses a delta whose α, rule, ... differ from the base's. So the delta
// CronJob passes --rule-from-base (the builder takes them from the base's
// manifest) and no rule flag or rule flag file of its own: with the full build's
// flag file, every delta would be refused from a tune's patch of the rule until
// the next full build. Operational flags (inputs, threads, retention) are its own.
const OPERATIONAL_FLAGS = new Set(["input", "max_bad_rows", "threads", "snapshot_root", "keep", "table_format",
  "partitions", "export", "dry_run", "lock_timeout_seconds", "quiet", "json", "delta_of", "delta_sweeps"]);

// Programs the manifests run that are not graphsieve's (their flags are not checked here).
const EXTERNAL_PROGRAMS = new Set(["kubectl"]);
// Abseil's own flags, which every graphsieve program accepts without listing them.
const ABSEIL_FLAGS = new Set(["flagfile", "fromenv", "tryfromenv", "undefok"]);

function methodFlags(args) {
  const out = {};
  for (const a of (args || []).slice(1)) {
    const [name, ...rest] = a.replace(/^--/, "").split("=");
    const key = name.replace(/-/g, "_");
    if (!OPERATIONAL_FLAGS.has(key)) out[key] = rest.join("=");
  }
  return out;
}

function deltaFlagErrors(objects) {
  const errors = [];
  const deltas = objects.filter((o) => o.kind === "CronJob").map((o) => [o, o.spec.jobTemplate.spec.template.spec.containers?.[0]?.args || []])
    .filter(([, args]) => args[0] === "graphsieve-build" &&
      (flagValue(args, "delta-of") !== undefined || flagValue(args, "delta_of") !== undefined));
  for (const [o, args] of deltas) {
    const flags = methodFlags(args);
    if (!("rule_from_base" in flags) || !["", "true"].includes(flags.rule_from_base)) {
      errors.push(`${o.kind}/${o.metadata.name}: a delta CronJob must pass --rule-from-base (its base's rule; ` +
        "with a rule of its own every delta is refused between a rule change and the next full build)");
    }
    for (const [k, v] of Object.entries(flags)) {
      if (k === "rule_from_base") continue;
      errors.push(`${o.kind}/${o.metadata.name}: --${k}${v === "" ? "" : `=${v}`}: a delta CronJob passes no rule flag ` +
        "or rule flag file of its own (--rule-from-base takes its base's)");
    }
  }
  return errors;
}

function ruleErrors(objects, dockerfile, helps) {
  const errors = [];
  const err = (o, msg) => errors.push(`${o.kind}/${o.metadata?.name}: ${msg}`);
  if (objects[0]?.kind !== "Namespace") errors.push(`the first object is ${objects[0]?.kind}, not the Namespace`);
  const ns = objects.find((o) => o.kind === "Namespace")?.metadata.name;
  for (const o of objects) {
    if (o.kind !== "Namespace" && o.metadata.namespace !== ns) err(o, `namespace '${o.metadata.namespace}', not '${ns}'`);
  }
  const claims = new Set(objects.filter((o) => o.kind === "PersistentVolumeClaim").map((o) => o.metadata.name));
  const user = dockerfile.match(/^USER (\d+):(\d+)\s*$/m);
  if (!user) errors.push("docker/Dockerfile has no numeric USER uid:gid line");
  for (const [o, tmpl] of podSpecs(objects)) {
    const spec = tmpl.spec;
    const sc = spec.securityContext || {};
    if (sc.runAsNonRoot !== true) err(o, "pod securityContext.runAsNonRoot is not true");
    if (sc.fsGroup === undefined) err(o, "no pod securityContext.fsGroup: a fresh volume is not writable by the image's user");
    if (user && (String(sc.runAsUser) !== user[1] || String(sc.runAsGroup) !== user[2])) {
      err(o, `runAsUser:runAsGroup ${sc.runAsUser}:${sc.runAsGroup} differ from the image's USER ${user[1]}:${user[2]}`);
    }
    for (const v of spec.volumes || []) {
      const c = v.persistentVolumeClaim?.claimName;
      if (c && !claims.has(c)) err(o, `volume ${v.name} uses PersistentVolumeClaim '${c}', defined nowhere`);
    }
    for (const c of [...(spec.initContainers || []), ...(spec.containers || [])]) {
      if (!c.imagePullPolicy) err(o, `container ${c.name} has no explicit imagePullPolicy`);
      if (!/:[\w][\w.-]*$/.test(c.image) || c.image.endsWith(":latest")) {
        err(o, `container ${c.name} image '${c.image}' has no fixed tag (kustomization.yaml images:)`);
      }
      const [prog, ...words] = c.command || c.args || [];
      if (EXTERNAL_PROGRAMS.has(prog)) continue;  // not ours: its flags are its own
      const help = helps[prog];
      if (!help) err(o, `container ${c.name} runs '${prog}', not a graphsieve program this check knows`);
      const flags = words.filter((w) => w.startsWith("--"));  // not a subcommand (tune, canary)
      const flagfile = flagValue(flags, "flagfile");
      if (flagfile !== undefined && !(c.volumeMounts || []).some((m) => flagfile.startsWith(`${m.mountPath}/`))) {
        err(o, `container ${c.name}: --flagfile=${flagfile} is on no mounted volume`);
      }
      for (const f of flags) {
        const name = f.replace(/^--/, "").split("=")[0];
        if (ABSEIL_FLAGS.has(name)) continue;
        const variants = [name, name.replace(/-/g, "_")];
        if (help && !variants.some((n) => help.includes(`--${n} `) || help.includes(`--${n})`) || help.includes(`--${n} (`))) {
          err(o, `container ${c.name}: ${prog} has no flag --${name} (${prog} --help)`);
        }
      }
    }
  }
  for (const e of deltaFlagErrors(objects)) errors.push(e);
  const server = objects.find((o) => o.kind === "Deployment" && o.metadata.name === "graphsieve-server");
  if (!server) {
    errors.push("no Deployment graphsieve-server");
    return errors;
  }
  const spec = server.spec.template.spec;
  const c = spec.containers?.[0];
  if (!c) {
    err(server, "no container");
    return errors;
  }
  const notice = Number(flagValue(c.args, "drain-notice-seconds") ?? 0);
  const grace = Number(flagValue(c.args, "drain-grace-seconds") ?? 10);
  const term = spec.terminationGracePeriodSeconds ?? 30;
  if (!(notice > 0)) err(server, "--drain-notice-seconds is 0: new calls are refused while endpoints still route to the pod");
  if (!(notice + grace < term)) err(server, `drain notice ${notice} s + grace ${grace} s >= terminationGracePeriodSeconds ${term} s`);
  const ports = Object.fromEntries((c.ports || []).map((p) => [p.name, p.containerPort]));
  if (String(flagValue(c.args, "port") ?? 50051) !== String(ports.grpc)) err(server, "--port differs from the grpc containerPort");
  if (String(flagValue(c.args, "admin-port") ?? 8080) !== String(ports.admin)) err(server, "--admin-port differs from the admin containerPort");
  if (String(server.spec.template.metadata.annotations?.["prometheus.io/port"]) !== String(ports.admin)) {
    err(server, "prometheus.io/port annotation differs from the admin port");
  }
  for (const [probe, service] of [["livenessProbe", undefined], ["readinessProbe", "graphsieve.v1.SamplingRateService"], ["startupProbe", "graphsieve.v1.SamplingRateService"]]) {
    const p = c[probe];
    if (!p?.grpc) err(server, `${probe} is not a gRPC health probe`);
    else if (p.grpc.port !== ports.grpc || p.grpc.service !== service) {
      err(server, `${probe} checks port ${p.grpc.port} service '${p.grpc.service ?? ""}', not ${ports.grpc} '${service ?? ""}'`);
    }
  }
  const snapMount = (c.volumeMounts || []).find((m) => m.mountPath === flagValue(c.args, "snapshot-root"));
  const snapVolume = (spec.volumes || []).find((v) => v.name === snapMount?.name);
  if (!snapMount) err(server, "no volume mounted at --snapshot-root");
  else if (snapMount.readOnly || snapVolume?.persistentVolumeClaim?.readOnly) {
    err(server, "the snapshot volume is read-only: PinVersion cannot write <root>/pins/ (retention may delete the pinned version)");
  }
  const labels = server.spec.template.metadata.labels;
  const svc = objects.find((o) => o.kind === "Service" && o.spec.ports.some((p) => p.appProtocol === "grpc"));
  if (!svc) errors.push("no Service with an appProtocol grpc port");
  else {
    if (svc.spec.clusterIP !== "None") err(svc, "not headless (clusterIP: None): clients cannot balance gRPC calls over replicas");
    for (const [k, v] of Object.entries(svc.spec.selector || {})) {
      if (labels[k] !== v) err(svc, `selector ${k}=${v} does not select the server pods`);
    }
    for (const p of svc.spec.ports) {
      if (typeof p.targetPort === "string" && !(p.targetPort in ports)) err(svc, `targetPort '${p.targetPort}' is not a container port name`);
    }
  }
  return errors;
}

// ---- commands ----------------------------------------------------------------

function loadObjects(file) {
  return YAML.parseAllDocuments(fs.readFileSync(file, "utf8")).map((d) => d.toJS()).filter(Boolean);
}

function checkAll(objects, dockerfile, helps) {
  const errors = [];
  for (const o of objects) {
    for (const e of [...schemaErrors(o), ...strictErrors(o)]) errors.push(`${o.kind}/${o.metadata?.name}: ${e}`);
  }
  return errors.concat(ruleErrors(objects, dockerfile, helps));
}

function readInputs(args) {
  const [rendered, dockerfile, serverHelp, buildHelp, evalHelp, cliHelp] = args;
  const helps = { "graphsieve-server": fs.readFileSync(serverHelp, "utf8"), "graphsieve-build": fs.readFileSync(buildHelp, "utf8") };
  if (evalHelp) helps["graphsieve-eval"] = fs.readFileSync(evalHelp, "utf8");
  if (cliHelp) helps["graphsieve"] = fs.readFileSync(cliHelp, "utf8");
  return { objects: loadObjects(rendered), dockerfile: fs.readFileSync(dockerfile, "utf8"), helps };
}

function manifests(args) {
  const { objects, dockerfile, helps } = readInputs(args);
  const errors = checkAll(objects, dockerfile, helps);
  for (const o of objects) console.log(`object ${o.apiVersion} ${o.kind}/${o.metadata.name}`);
  for (const e of errors) console.log(`FAIL: ${e}`);
  console.log(`${objects.length} objects, ${errors.length} problems`);
  return errors.length === 0;
}

// Each case breaks a copy of the objects; the check must report `expect`.
const BREAKS = [
  ["unknown field", /unknown field spec\.template\.spec\.securityContext\.fsgroup/, (os, srv) => { srv.spec.template.spec.securityContext.fsgroup = 1; }],
  ["unknown metadata field", /unknown field metadata\.lables/, (os, srv) => { srv.metadata.lables = {}; }],
  ["unknown field deep in a CronJob", /unknown field spec\.jobTemplate\.spec\.template\.spec\.containers\[0\]\.securityContext\.readOnlyRootFileSystem/,
    (os) => { os.find((o) => o.kind === "CronJob").spec.jobTemplate.spec.template.spec.containers[0].securityContext.readOnlyRootFileSystem = true; }],
  ["bad enum", /imagePullPolicy must be equal to one of the allowed values/, (os, srv) => { srv.spec.template.spec.containers[0].imagePullPolicy = "Sometimes"; }],
  ["wrong type", /replicas must be integer/, (os, srv) => { srv.spec.replicas = "3"; }],
  ["missing required", /must have required property '?containers/, (os, srv) => { delete srv.spec.template.spec.containers; }],
  ["namespace not first", /not the Namespace/, (os) => { os.push(os.shift()); }],
  ["undefined claim", /'impression-logs', defined nowhere/, (os) => { os.splice(os.findIndex((o) => o.metadata.name === "impression-logs"), 1); }],
  ["no fsGroup", /no pod securityContext.fsGroup/, (os, srv) => { delete srv.spec.template.spec.securityContext.fsGroup; }],
  ["no pull policy", /no explicit imagePullPolicy/, (os, srv) => { delete srv.spec.template.spec.containers[0].imagePullPolicy; }],
  ["latest tag", /has no fixed tag/, (os, srv) => { srv.spec.template.spec.containers[0].image = "graphsieve:latest"; }],
  ["user mismatch", /differ from the image's USER/, (os, srv) => { srv.spec.template.spec.securityContext.runAsUser = 1000; }],
  ["unknown flag", /has no flag --drain-notice-second\b/, (os, srv) => { srv.spec.template.spec.containers[0].args.push("--drain-notice-second=5"); }],
  ["drain beyond grace", /terminationGracePeriodSeconds/, (os, srv) => { srv.spec.template.spec.terminationGracePeriodSeconds = 20; }],
  ["no drain notice", /--drain-notice-seconds is 0/, (os, srv) => { const a = srv.spec.template.spec.containers[0].args; a.splice(a.findIndex((x) => x.startsWith("--drain-notice")), 1); }],
  ["read-only pins", /cannot write <root>\/pins/, (os, srv) => { srv.spec.template.spec.containers[0].volumeMounts[0].readOnly = true; }],
  ["http probe", /readinessProbe is not a gRPC health probe/, (os, srv) => { srv.spec.template.spec.containers[0].readinessProbe = { httpGet: { port: 8080, path: "/readyz" } }; }],
  ["ClusterIP service", /not headless/, (os) => { delete os.find((o) => o.kind === "Service").spec.clusterIP; }],
  ["delta with a rule flag of its own", /--alpha=0\.3: a delta CronJob passes no rule flag/, (os) => {
    os.find((o) => o.metadata.name === "graphsieve-delta").spec.jobTemplate.spec.template.spec.containers[0].args.push("--alpha=0.3");
  }],
  ["delta with the rule file", /--flagfile=\/etc\/graphsieve\/rule\/rule\.flags: a delta CronJob passes no rule flag/, (os) => {
    os.find((o) => o.metadata.name === "graphsieve-delta").spec.jobTemplate.spec.template.spec.containers[0].args
      .push("--flagfile=/etc/graphsieve/rule/rule.flags");
  }],
  ["delta without --rule-from-base", /graphsieve-delta: a delta CronJob must pass --rule-from-base/, (os) => {
    const a = os.find((o) => o.metadata.name === "graphsieve-delta").spec.jobTemplate.spec.template.spec.containers[0].args;
    a.splice(a.findIndex((x) => x.startsWith("--rule-from-base")), 1);
  }],
  ["rule file on no volume", /--flagfile=\/etc\/graphsieve\/rule\/rule\.flags is on no mounted volume/, (os) => {
    const c = os.find((o) => o.metadata.name === "graphsieve-build").spec.jobTemplate.spec.template.spec.containers[0];
    c.volumeMounts = c.volumeMounts.filter((m) => m.mountPath !== "/etc/graphsieve/rule");
  }],
  ["unknown flag of a tune step", /container tune: graphsieve-eval has no flag --alpha_grid/, (os) => {
    os.find((o) => o.metadata.name === "graphsieve-tune" && o.kind === "CronJob").spec.jobTemplate.spec.template.spec.initContainers[0].args.push("--alpha_grid=0.1");
  }],
  ["scrape port", /prometheus.io\/port annotation differs/, (os, srv) => { srv.spec.template.metadata.annotations["prometheus.io/port"] = "9090"; }],
];

function selfTest(args) {
  const inputs = readInputs(args);
  const clean = checkAll(inputs.objects, inputs.dockerfile, inputs.helps);
  if (clean.length) {
    console.log(`FAIL: self-test needs a clean render, got: ${clean.join("; ")}`);
    return false;
  }
  let ok = true;
  for (const [name, expect, breakIt] of BREAKS) {
    const objects = structuredClone(inputs.objects);
    breakIt(objects, objects.find((o) => o.kind === "Deployment"));
    const errors = checkAll(objects, inputs.dockerfile, inputs.helps);
    const hit = errors.some((e) => expect.test(e));
    console.log(`${hit ? "ok" : "FAIL"}: ${name} is reported${hit ? "" : ` (got: ${errors.join("; ") || "nothing"})`}`);
    ok &&= hit;
  }
  return ok;
}

const SD_ROLES = new Set(["node", "service", "pod", "endpoints", "endpointslice", "ingress"]);
const SD_KEYS = new Set(["role", "namespaces", "selectors", "api_server", "kubeconfig_file", "attach_metadata", "follow_redirects", "enable_http2", "tls_config", "authorization"]);

function prometheusSd([input, output]) {
  const doc = YAML.parse(fs.readFileSync(input, "utf8"));
  const errors = [];
  let blocks = 0;
  for (const job of doc.scrape_configs || []) {
    if (!job.kubernetes_sd_configs) continue;
    for (const sd of job.kubernetes_sd_configs) {
      blocks++;
      for (const k of Object.keys(sd)) if (!SD_KEYS.has(k)) errors.push(`${job.job_name}: unknown kubernetes_sd_configs field '${k}'`);
      if (!SD_ROLES.has(sd.role)) errors.push(`${job.job_name}: kubernetes_sd_configs role '${sd.role}' is not one of ${[...SD_ROLES].join(", ")}`);
      const names = sd.namespaces?.names;
      if (names !== undefined && !(Array.isArray(names) && names.every((n) => typeof n === "string"))) {
        errors.push(`${job.job_name}: namespaces.names is not a list of names`);
      }
      for (const r of job.relabel_configs || []) {
        for (const label of r.source_labels || []) {
          const m = label.match(/^__meta_kubernetes_(\w+?)_/);
          if (m && m[1] !== sd.role && !(m[1] === "namespace")) {
            errors.push(`${job.job_name}: relabelling reads ${label}, which role '${sd.role}' does not set`);
          }
        }
      }
    }
    // promtool sees the same job with a static target in place of discovery.
    job.static_configs = [{ targets: ["graphsieve-server.invalid:8080"] }];
    delete job.kubernetes_sd_configs;
  }
  if (blocks === 0) errors.push(`${input}: no kubernetes_sd_configs block (expected the Kubernetes config)`);
  fs.writeFileSync(output, YAML.stringify(doc));
  for (const e of errors) console.log(`FAIL: ${e}`);
  console.log(`${blocks} kubernetes_sd_configs block(s) checked; static copy for promtool: ${output}`);
  return errors.length === 0;
}

function grafana([input, output]) {
  const dash = JSON.parse(fs.readFileSync(input, "utf8"));
  const rules = [];
  const walk = (panels) => {
    for (const p of panels || []) {
      for (const t of p.targets || []) {
        if (t.expr === undefined) continue;
        // Grafana's interval variables become fixed ranges for the syntax check.
        const expr = t.expr.replace(/\$__rate_interval|\$__interval|\$__range/g, "5m");
        rules.push({ record: `grafana:panel_${p.id}_${t.refId}`, expr, labels: { panel: p.title } });
      }
      walk(p.panels);
    }
  };
  walk(dash.panels);
  fs.writeFileSync(output, YAML.stringify({ groups: [{ name: "grafana-expressions", rules }] }));
  console.log(`${rules.length} PromQL expressions from ${path.basename(input)} -> ${output}`);
  return rules.length > 0;
}

const [command, ...rest] = process.argv.slice(2);
const commands = { manifests, "self-test": selfTest, "prometheus-sd": prometheusSd, grafana };
if (!commands[command]) {
  console.error(`usage: check_manifests.mjs ${Object.keys(commands).join("|")} ARGS... (see the header)`);
  process.exit(2);
}
process.exit(commands[command](rest) ? 0 : 1);
