// The ONNX Runtime baseline of pto_bench_kernels: a child process that runs DIR/model.onnx
// (written by tools/bench/onnx_export.py) with onnxruntime-node and times it on request.
//
//   node tools/bench/ort_child.js --dir DIR --module MODDIR --threads N --copies C
//       --warmup-seconds S --min-rep-seconds S
//
// MODDIR is the installed onnxruntime-node package. Protocol, one line each way: first INFO
// (the version and settings), DETAIL (diagnostics) and OWN <seconds> (ORT's own time per
// call, from its profiler) lines, then READY <calls per repetition> -1, MISSING <reason>
// (module not loadable, exit 0) or ERROR <reason> (exit 1). Requests on stdin: `rep` -> REP
// <seconds per call>; `output PATH` -> the outputs of one run on copy 0 as raw float32,
// concatenated, then OUTPUT. End of stdin: exit 0.
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const readline = require('readline');

// Synchronous writes to fd 1: each line is out before the next request is read.
function say(line) {
  const buf = Buffer.from(line + '\n');
  for (let off = 0; off < buf.length;) {
    try {
      off += fs.writeSync(1, buf, off);
    } catch (e) {
      if (e.code !== 'EAGAIN') throw e;
    }
  }
}

function parseArgs(argv) {
  const want = ['dir', 'module', 'threads', 'copies', 'warmup-seconds', 'min-rep-seconds'];
  const args = {};
  for (let i = 0; i < argv.length; i += 2) {
    const key = argv[i].replace(/^--/, '');
    if (!want.includes(key) || i + 1 >= argv.length) throw new Error(`bad argument '${argv[i]}'`);
    args[key] = argv[i + 1];
  }
  for (const key of want) {
    if (args[key] === undefined) throw new Error(`missing --${key}`);
  }
  return {
    dir: args.dir, module: args.module, threads: parseInt(args.threads, 10),
    copies: Math.max(1, parseInt(args.copies, 10)),
    warmupSeconds: parseFloat(args['warmup-seconds']),
    minRepSeconds: parseFloat(args['min-rep-seconds']),
  };
}

// A float32 C-order .npy file (format 1.0, 2.0 or 3.0) -> {shape, data: Float32Array}.
function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.length < 10 || buf.toString('latin1', 0, 6) !== '\x93NUMPY') {
    throw new Error(`${file}: not a .npy file`);
  }
  const major = buf[6];
  let headerStart, headerLen;
  if (major === 1) {
    headerStart = 10;
    headerLen = buf.readUInt16LE(8);
  } else if (major === 2 || major === 3) {
    headerStart = 12;
    headerLen = buf.readUInt32LE(8);
  } else {
    throw new Error(`${file}: .npy version ${major} not supported`);
  }
  const header = buf.toString(major === 3 ? 'utf8' : 'latin1', headerStart,
                              headerStart + headerLen);
  const descr = /'descr'\s*:\s*'([^']*)'/.exec(header);
  const fortran = /'fortran_order'\s*:\s*(True|False)/.exec(header);
  const shapeText = /'shape'\s*:\s*\(([^)]*)\)/.exec(header);
  if (!descr || descr[1] !== '<f4') throw new Error(`${file}: want descr '<f4'`);
  if (!fortran || fortran[1] !== 'False') throw new Error(`${file}: want fortran_order False`);
  if (!shapeText) throw new Error(`${file}: no shape in header`);
  const shape = shapeText[1].split(',').map((s) => s.trim()).filter((s) => s !== '')
      .map((s) => {
        if (!/^\d+$/.test(s)) throw new Error(`${file}: bad shape '${shapeText[1]}'`);
        return parseInt(s, 10);
      });
  const count = shape.reduce((a, b) => a * b, 1);
  const dataStart = headerStart + headerLen;
  if (buf.length - dataStart !== 4 * count) {
    throw new Error(`${file}: ${buf.length - dataStart} data bytes, shape needs ${4 * count}`);
  }
  // Copied into a fresh Float32Array: the file buffer's data need not be 4-byte aligned.
  const data = new Float32Array(count);
  buf.copy(Buffer.from(data.buffer), 0, dataStart);
  return {shape, data};
}

// libonnxruntime's own version, from its ELF symbol version (VERS_x.y.z), if it can be found.
function libVersion(moduleDir) {
  const dir = path.join(moduleDir, 'bin', 'napi-v6', process.platform, process.arch);
  try {
    for (const name of fs.readdirSync(dir)) {
      if (!/^(lib)?onnxruntime\.(so|dylib|dll)/.test(name)) continue;
      const lib = fs.readFileSync(path.join(dir, name));
      const at = lib.indexOf('VERS_1.');
      if (at >= 0) return /^VERS_([0-9.]+)/.exec(lib.toString('latin1', at, at + 24))[1];
    }
  } catch (e) {
    // Fall through: the version is only informative.
  }
  return 'unknown';
}

// Lines from stdin, one per next() call; null at the end of input.
function lineReader() {
  const lines = [];
  let waiting = null;
  let ended = false;
  const rl = readline.createInterface({input: process.stdin, crlfDelay: Infinity});
  rl.on('line', (line) => {
    if (waiting) { const w = waiting; waiting = null; w(line); } else lines.push(line);
  });
  rl.on('close', () => {
    ended = true;
    if (waiting) { const w = waiting; waiting = null; w(null); }
  });
  return () => {
    if (lines.length) return Promise.resolve(lines.shift());
    if (ended) return Promise.resolve(null);
    return new Promise((resolve) => { waiting = resolve; });
  };
}

const seconds = (t0, t1) => Number(t1 - t0) * 1e-9;

// Awaited calls of `call` (a session.run), at least minCalls and until maxSeconds have passed,
// at most maxCalls -> {calls, wall: the minimum seconds of one call}.
async function timeRuns(call, minCalls, maxCalls, maxSeconds = 0) {
  let wall = Infinity;
  let calls = 0;
  const start = process.hrtime.bigint();
  while (calls < maxCalls &&
         (calls < minCalls || seconds(start, process.hrtime.bigint()) < maxSeconds)) {
    const t0 = process.hrtime.bigint();
    await call();
    wall = Math.min(wall, seconds(t0, process.hrtime.bigint()));
    ++calls;
  }
  return {calls, wall};
}

// printf's %.9e: JavaScript writes the exponent as e-3, C as e-03.
function fmtE(x) {
  return x.toExponential(9).replace(/e([+-])(\d)$/, 'e$10$2');
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  if (os.endianness() !== 'LE') throw new Error('big-endian host: .npy parsing assumes LE');
  let ort;
  try {
    ort = require(path.resolve(args.module));
  } catch (e) {
    say(`MISSING onnxruntime-node cannot be loaded from ${args.module}: ` +
        String(e.message).split('\n')[0]);
    return 0;
  }

  const kase = JSON.parse(fs.readFileSync(path.join(args.dir, 'case.json'), 'utf8'));
  let info = {};
  try {
    info = JSON.parse(fs.readFileSync(path.join(args.dir, 'model_info.json'), 'utf8'));
  } catch (e) {
    // Optional: only for the INFO line.
  }
  const options = {
    intraOpNumThreads: args.threads, interOpNumThreads: 1,
    graphOptimizationLevel: 'all', executionMode: 'sequential',
  };
  say(`INFO onnxruntime-node ${ort.env.versions.node} ` +
      `(libonnxruntime ${libVersion(args.module)}), intra_op_num_threads=${args.threads}, ` +
      'inter_op_num_threads=1, graph_optimization_level=all, execution_mode=sequential, ' +
      'its thread pool spinning between calls (the default)');
  say(`DETAIL graph=${kase.graph}, exported by torch ${info.torch || '?'} opset ` +
      `${info.opset || '?'} variant ${info.variant || '?'}, copies=${args.copies}`);

  const modelPath = path.join(args.dir, 'model.onnx');
  // C byte-identical copies of the graph inputs, each in its own buffer, used in turn.
  const graphInputs = kase.inputs.filter((s) => !s.constant)
      .map((s) => ({name: s.name, ...readNpy(path.join(args.dir, s.file))}));
  const copies = [];
  for (let c = 0; c < args.copies; ++c) {
    const feeds = {};
    for (const g of graphInputs) {
      feeds[g.name] = new ort.Tensor('float32', c === 0 ? g.data : g.data.slice(), g.shape);
    }
    copies.push(feeds);
  }

  // Diagnostics, each on a session of its own that is released before the timed one exists.
  const overheadModel = path.join(args.dir, 'overhead.onnx');
  if (fs.existsSync(overheadModel)) {
    const tiny = await ort.InferenceSession.create(overheadModel, options);
    const one = {x: new ort.Tensor('float32', new Float32Array(1), [1])};
    const t = await timeRuns(() => tiny.run(one), 1000, 1000);
    await tiny.release();
    say('DETAIL session.run on a one-element Add (the binding\'s fixed cost): ' +
        `min ${fmtE(t.wall)} s`);
  }
  {
    const prefix = path.join(args.dir, `ort_profile_${process.pid}`);
    const profiled = await ort.InferenceSession.create(
        modelPath, {...options, enableProfiling: true, profileFilePrefix: prefix});
    const t = await timeRuns(() => profiled.run(copies[0]), 3, 200, 0.5);
    profiled.endProfiling();
    await profiled.release();
    let own = Infinity;
    for (const name of fs.readdirSync(args.dir)) {
      if (!name.startsWith(path.basename(prefix))) continue;
      const file = path.join(args.dir, name);
      for (const e of JSON.parse(fs.readFileSync(file, 'utf8'))) {
        if (e.name === 'model_run') own = Math.min(own, e.dur * 1e-6);
      }
      fs.unlinkSync(file);
    }
    // The gap is the binding's share (it copies every output into a new JavaScript buffer);
    // profiling itself slows both a little. OWN is ORT's own time, what a caller of its C API
    // who binds the outputs gets: the bench holds pto to the faster of it and the REP times.
    say(`DETAIL profiled session, ${t.calls} calls on copy 0: ORT's model_run min ` +
        `${fmtE(own)} s, awaited session.run min ${fmtE(t.wall)} s`);
    if (Number.isFinite(own)) say(`OWN ${fmtE(own)}`);
  }

  const session = await ort.InferenceSession.create(modelPath, options);
  let next = 0;
  const run = () => {
    const feeds = copies[next];
    next = (next + 1) % copies.length;
    return session.run(feeds);
  };

  // Warm-up and calibration, as the C++ bench does them.
  const warm = await timeRuns(run, 2, 1001, args.warmupSeconds);
  const perRep = Math.max(1, Math.ceil(args.minRepSeconds / Math.max(warm.wall, 1e-9)));
  say(`READY ${perRep} -1`);

  const nextLine = lineReader();
  for (let line; (line = await nextLine()) !== null;) {
    line = line.trim();
    if (line === '') continue;
    if (line === 'rep') {
      if (perRep > 1) await run();
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < perRep; ++i) await run();
      say(`REP ${fmtE(seconds(t0, process.hrtime.bigint()) / perRep)}`);
    } else if (line.startsWith('output ')) {
      const file = line.slice('output '.length);
      const results = await session.run(copies[0]);
      const parts = kase.outputs.map((o) => {
        const t = results[o.name];
        if (!t || t.type !== 'float32') throw new Error(`output ${o.name}: no float32 tensor`);
        return Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength);
      });
      try {
        fs.writeFileSync(file, Buffer.concat(parts));
        say('OUTPUT');
      } catch (e) {
        say(`ERROR cannot write ${file}`);
      }
    } else {
      say(`ERROR unknown request '${line}'`);
    }
  }
  return 0;
}

main().then((code) => process.exit(code), (e) => {
  say(`ERROR ${String(e && e.message ? e.message : e).split('\n')[0]}`);
  process.exit(1);
});
