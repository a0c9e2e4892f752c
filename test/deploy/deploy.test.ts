import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { copyFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import dotenv from 'dotenv';
import { DockerfileParser } from 'dockerfile-ast';
import { parseAllDocuments } from 'yaml';
import { validateConfig } from '../../core/services/config/config-file.js';
import { loadSettings } from '../../core/services/config/settings.js';
import { ROOT, tempDir } from '../helpers/checkout.js';

const DEPLOY = path.join(ROOT, 'deploy');

/** Test-only packages of .ci/run that the image does not need. */
const CI_ONLY_PACKAGES = ['chromium', 'systemd'];

/** Packages named by `apt-get install` in a shell text (continuation lines joined, options and `&&` tails dropped). */
function aptPackages(words: string[]): string[] {
  const at = words.findIndex((w, i) => w === 'install' && /apt-get$/.test(words[i - 1] ?? ''));
  if (at < 0) return [];
  const packages: string[] = [];
  for (const word of words.slice(at + 1)) {
    if (word === '&&' || word === ';' || word === '||') break;
    if (!word.startsWith('-')) packages.push(word);
  }
  return packages;
}

/** The compiled entry `npm start` runs (package.json), e.g. `dist/cli/start.js`. */
function npmStartEntry(): string {
  const start = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
  return /\b(dist\/\S+\.js)\b/.exec(start)?.[1] ?? '(none)';
}

function ciPackages(): string[] {
  const text = readFileSync(path.join(ROOT, '.ci', 'run'), 'utf8').replace(/\\\n/g, ' ');
  const line = text.split('\n').find((l) => /apt-get install/.test(l) && !l.trim().startsWith('#'));
  return aptPackages((line ?? '').split(/\s+/).filter(Boolean));
}

describe('deploy/systemd: the template unit', () => {
  const unitFile = path.join(DEPLOY, 'systemd', 'wa-assistant@.service');
  const unit = readFileSync(unitFile, 'utf8');
  const directive = (name: string) => unit.split('\n').filter((l) => l.startsWith(`${name}=`)).map((l) => l.slice(name.length + 1));

  function verify(dir: string): { status: number | null; output: string } {
    const run = spawnSync('systemd-analyze', ['verify', '--man=no', path.join(dir, 'wa-assistant@alice.service')], { encoding: 'utf8', timeout: 20_000 });
    return { status: run.status, output: `${run.stdout}${run.stderr}`.trim() };
  }

  it('passes `systemd-analyze verify` for an instance, which does catch a broken unit', async function () {
    if (spawnSync('systemd-analyze', ['--version']).error) {
      // .ci/run installs the Debian package systemd; a developer machine without it skips only this check.
      process.stderr.write('      (skipped: systemd-analyze not found; install the Debian package systemd to run this check)\n');
      this.skip();
    }
    const dir = await tempDir('wabot-unit-');
    try {
      await copyFile(unitFile, path.join(dir, 'wa-assistant@.service'));
      const clean = verify(dir);
      expect(clean.output, clean.output).to.equal('');
      expect(clean.status).to.equal(0);
      await writeFile(path.join(dir, 'wa-assistant@.service'), unit.replace('Restart=on-failure', 'Restart=on-failure\nRestartt=always'));
      expect(verify(dir).output).to.match(/Unknown key 'Restartt'/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('gives every instance its own folder for .env, config.json and data, writable despite ProtectSystem', () => {
    const workdir = directive('WorkingDirectory')[0];
    expect(workdir).to.equal('/var/lib/wa-assistant/%i');
    const env = Object.fromEntries(directive('Environment').map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]));
    expect(env.ENV_FILE).to.equal(`${workdir}/.env`);
    expect(env.CONFIG_FILE).to.equal(`${workdir}/config.json`);
    expect(env.DATA_DIR).to.equal(`${workdir}/data`);
    expect(directive('ReadWritePaths')).to.deep.equal([workdir]);
    expect(directive('ProtectSystem')).to.deep.equal(['strict']);
    // The program is the one installed copy's compiled start entry, the same `npm start` runs.
    const exec = directive('ExecStart')[0] ?? '';
    const entry = /\/opt\/wa-assistant\/(\S+\.js)/.exec(exec)?.[1];
    expect(entry).to.equal(npmStartEntry());
    expect(existsSync(path.join(ROOT, entry!))).to.equal(true);
    // The workspace sandbox needs user namespaces and Node's JIT needs writable code: these would break them.
    for (const breaking of ['RestrictNamespaces', 'PrivateUsers', 'MemoryDenyWriteExecute']) expect(directive(breaking), breaking).to.deep.equal([]);
    expect(directive('KillSignal')).to.deep.equal(['SIGTERM']);
  });
});

type K8sObject = { apiVersion: string; kind: string; metadata: { name: string; annotations?: Record<string, string> }; [key: string]: any };

function manifests(): K8sObject[] {
  const dir = path.join(DEPLOY, 'kubernetes');
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .flatMap((f) => parseAllDocuments(readFileSync(path.join(dir, f), 'utf8')).map((doc) => {
      expect(doc.errors, f).to.deep.equal([]);
      return doc.toJS() as K8sObject;
    }));
}

/** Validates one object with the Kubernetes JSON schema of its kind (kubernetes-models' compiled ajv validators). */
async function validateK8s(object: K8sObject): Promise<void> {
  // `v1` → kubernetes-models/v1/Service, `apps/v1` → kubernetes-models/apps/v1/StatefulSet
  const module = (await import(`kubernetes-models/${object.apiVersion}/${object.kind}`)) as Record<string, new (data: unknown) => { validate(): void }>;
  const Model = module[object.kind];
  if (!Model) throw new Error(`no schema for ${object.apiVersion} ${object.kind}`);
  new Model(object).validate();
}

describe('deploy/kubernetes: the manifests', () => {
  const objects = manifests();
  const find = (kind: string) => objects.filter((o) => o.kind === kind);
  const set = find('StatefulSet')[0]!;
  const pod = set?.spec.template.spec;
  const bot = pod?.containers.find((c: { name: string }) => c.name === 'bot');
  const env = (container: any, name: string) => container.env.find((e: { name: string }) => e.name === name)?.value as string | undefined;

  it('are valid against the Kubernetes schemas, which do catch a wrong field', async () => {
    expect(objects.map((o) => o.kind).sort()).to.deep.equal(['ConfigMap', 'Secret', 'Service', 'StatefulSet']);
    for (const object of objects) await validateK8s(object);
    const broken = structuredClone(set);
    broken.spec.template.spec.containers[0].ports[0].containerPort = 'three thousand';
    let error: unknown;
    await validateK8s(broken).catch((err) => (error = err));
    expect(String(error)).to.match(/containerPort must be integer/);
  });

  it('run one pod per account with its own volume, probes on /healthz and /readyz and Prometheus annotations', () => {
    const service = find('Service')[0]!;
    expect(set.spec.serviceName).to.equal(service.metadata.name);
    expect(service.spec.clusterIP).to.equal('None');
    expect(set.spec.selector.matchLabels).to.deep.include(service.spec.selector);
    expect(set.spec.template.metadata.labels).to.deep.include(set.spec.selector.matchLabels);
    const port = bot.ports.find((p: { name: string }) => p.name === 'web').containerPort;
    expect(bot.livenessProbe.httpGet).to.deep.equal({ path: '/healthz', port: 'web' });
    expect(bot.startupProbe.httpGet).to.deep.equal({ path: '/healthz', port: 'web' });
    expect(bot.readinessProbe.httpGet).to.deep.equal({ path: '/readyz', port: 'web' });
    expect(set.spec.template.metadata.annotations).to.deep.equal({ 'prometheus.io/scrape': 'true', 'prometheus.io/port': String(port), 'prometheus.io/path': '/metrics' });
    const claim = set.spec.volumeClaimTemplates[0].metadata.name;
    const dataMount = bot.volumeMounts.find((m: { name: string }) => m.name === claim).mountPath;
    expect(env(bot, 'CONFIG_FILE')!.startsWith(`${dataMount}/`)).to.equal(true);
    expect(env(bot, 'DATA_DIR')!.startsWith(`${dataMount}/`)).to.equal(true);
    const seed = pod.initContainers[0];
    expect(env(seed, 'CONFIG_FILE')).to.equal(env(bot, 'CONFIG_FILE'));
    expect(pod.securityContext.runAsNonRoot).to.equal(true);
  });

  it('give every pod its settings from the Secret and a valid first config.json from the ConfigMap', () => {
    const secret = find('Secret')[0]!;
    const configMap = find('ConfigMap')[0]!;
    const accountsVolume = pod.volumes.find((v: any) => v.secret?.secretName === secret.metadata.name);
    const accountsMount = bot.volumeMounts.find((m: { name: string }) => m.name === accountsVolume.name).mountPath;
    expect(env(bot, 'ENV_FILE')).to.equal(`${accountsMount}/$(POD_NAME).env`);
    expect(pod.volumes.some((v: any) => v.configMap?.name === configMap.metadata.name)).to.equal(true);
    const port = bot.ports[0].containerPort;
    for (let ordinal = 0; ordinal < set.spec.replicas; ordinal++) {
      const podName = `${set.metadata.name}-${ordinal}`;
      const envText = secret.stringData[`${podName}.env`];
      expect(envText, `${podName}.env`).to.be.a('string');
      // The account's settings load as they would in the pod (placeholders, but complete).
      const settings = loadSettings({ cwd: '/nonexistent', env: dotenv.parse(envText) });
      expect(settings.configToken, podName).not.to.equal('');
      const config = JSON.parse(configMap.data[`${podName}.json`]);
      expect(validateConfig(config), podName).to.deep.equal([]);
      // Bound to every interface (probes and Prometheus reach the pod by its address) on the container's port.
      expect(config.host, podName).to.equal('0.0.0.0');
      expect(config.port, podName).to.equal(port);
    }
  });
});

describe('deploy/Dockerfile', () => {
  const dockerfile = DockerfileParser.parse(readFileSync(path.join(DEPLOY, 'Dockerfile'), 'utf8'));
  const instructions = dockerfile.getInstructions();
  const of = (keyword: string) => instructions.filter((i) => i.getKeyword() === keyword);

  it('is a Debian-based Node 20 image installing exactly the packages CI tests with (less test-only ones)', () => {
    const from = dockerfile.getFROMs()[0]!;
    expect(from.getImageName()).to.equal('node');
    expect(from.getImageTag()).to.match(/^20-(bookworm|bullseye|trixie)(-slim)?$/);
    const imagePackages = of('RUN').flatMap((run) => aptPackages(run.getArguments().map((a) => a.getValue())));
    expect(imagePackages).to.include.members(['bubblewrap', 'ffmpeg', 'yt-dlp', 'python3']);
    const ci = ciPackages();
    expect(ci).to.include.members(CI_ONLY_PACKAGES);
    expect([...imagePackages].sort()).to.deep.equal(ci.filter((p) => !CI_ONLY_PACKAGES.includes(p)).sort());
  });

  it('runs the built start entry as a non-root user with the data in a volume', () => {
    const users = of('USER').map((u) => u.getArgumentsContent()?.trim());
    expect(users).to.have.length.greaterThan(0);
    expect(users.at(-1)).not.to.match(/^(root|0)(:|$)/);
    const volume = (of('VOLUME')[0] as any).getJSONStrings().map((s: any) => s.getJSONValue()) as string[];
    const envs = Object.fromEntries(of('ENV').flatMap((e: any) => e.getProperties().map((p: any) => [p.getName(), p.getValue()])));
    expect(envs.DATA_DIR.startsWith(`${volume[0]}/`)).to.equal(true);
    expect(envs.CONFIG_FILE.startsWith(`${volume[0]}/`)).to.equal(true);
    const cmd = (of('CMD').at(-1) as any).getJSONStrings().map((s: any) => s.getJSONValue()) as string[];
    expect(cmd[0]).to.equal('node');
    expect(cmd.at(-1)).to.equal(npmStartEntry());
    expect(existsSync(path.join(ROOT, cmd.at(-1)!))).to.equal(true);
    expect(of('EXPOSE')[0]!.getArgumentsContent()).to.equal('3000');
    expect(of('HEALTHCHECK')[0]!.getArgumentsContent()).to.contain('/healthz');
  });

  it('copies the package.json of every npm workspace before npm ci (which installs the workspaces too)', () => {
    const workspaces = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { workspaces?: string[] }).workspaces ?? [];
    const dirs = workspaces.flatMap((w) => (w.endsWith('/*') ? readdirSync(path.join(ROOT, w.slice(0, -2))).map((d) => `${w.slice(0, -2)}/${d}`) : [w]));
    expect(dirs).to.include('packages/plugin-api');
    const ci = instructions.findIndex((i) => i.getKeyword() === 'RUN' && /\bnpm ci\b/.test(i.getArgumentsContent() ?? ''));
    expect(ci).to.be.greaterThan(0);
    const copied = instructions.slice(0, ci).filter((i) => i.getKeyword() === 'COPY').flatMap((i) => i.getArguments().slice(0, -1).map((a) => a.getValue()));
    for (const dir of dirs) expect(copied, dir).to.include(`${dir}/package.json`);
  });

  it('never copies an account\'s secrets, session or data into the image', () => {
    const ignored = readFileSync(path.join(ROOT, '.dockerignore'), 'utf8').split('\n').map((l) => l.trim());
    for (const secret of ['.env', 'config.json', 'data/', 'node_modules/']) expect(ignored, secret).to.include(secret);
  });
});
