// speedscope-check.js FILE - validates a speedscope export against the
// file-format-schema.json that speedscope's own npm package ships (with
// ajv), then checks what the schema cannot: every sample's frame indexes
// exist and samples/weights pair up.  Prints one JSON summary line:
// {"profiles":[{"name","unit","samples","weight"}...]}; exits 1 if invalid.
'use strict';
const fs = require('fs');
const path = require('path');
const Ajv = require('ajv');

const schemaPath = path.join(path.dirname(require.resolve('speedscope/package.json')),
			     'dist/release/file-format-schema.json');
const schema = JSON.parse(fs.readFileSync(schemaPath, 'utf8'));
const doc = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const ajv = new Ajv({ allErrors: true, strict: false });
const validate = ajv.compile(schema);

function fail(msg) {
	console.error('speedscope-check: ' + msg);
	process.exit(1);
}

if (!validate(doc))
	fail('schema: ' + ajv.errorsText(validate.errors));
const nframes = doc.shared.frames.length;
const out = [];
for (const p of doc.profiles) {
	if (p.type !== 'sampled')
		fail(`profile ${p.name} is ${p.type}, not sampled`);
	if (p.samples.length !== p.weights.length)
		fail(`profile ${p.name}: ${p.samples.length} samples, ${p.weights.length} weights`);
	let weight = 0;
	for (const s of p.samples)
		for (const f of s)
			if (!Number.isInteger(f) || f < 0 || f >= nframes)
				fail(`profile ${p.name}: frame index ${f} of ${nframes}`);
	for (const w of p.weights)
		weight += w;
	if (weight > p.endValue - p.startValue)
		fail(`profile ${p.name}: weights ${weight} exceed endValue ${p.endValue}`);
	out.push({ name: p.name, unit: p.unit, samples: p.samples.length, weight });
}
console.log(JSON.stringify({ profiles: out }));
