#!/usr/bin/env node
// What checking the write bodies by hand (apps/objects/src/object-writes/write-body.ts, called by
// the validation pipe through WriteObjectDto.checkBody and IngestRequestDto.checkBody) saves over
// checking them with class-transformer and class-validator decorators in the same pipe: CPU per
// body, for a 10,000-object ingest (8 property values each) and for the body of one PUT. The
// decorated classes below hold the same structural rules (types, required fields, list bounds,
// nesting); they could not give the API's messages (an unknown field's reason names the fields
// the body takes), so they are here only to be timed. Needs `npm run build`.
//
//   node bench/tools/write-body.mjs
import 'reflect-metadata';
import { createRequire } from 'node:module';
import { ROOT } from '../lib/stack.mjs';

const require = createRequire(import.meta.url);
const { createValidationPipe } = require(`${ROOT}/dist/apps/objects/libs/platform/src/validation/validation.pipe.js`);
const { checkIngestBody, checkWriteObjectBody } = require(`${ROOT}/dist/apps/objects/apps/objects/src/object-writes/write-body.js`);
const { Type } = require('class-transformer');
const v = require('class-validator');

/** Applies property decorators to `cls`: { property: [decorator, ...] }. */
function decorate(cls, properties) {
  for (const [property, decorators] of Object.entries(properties)) for (const d of decorators) d(cls.prototype, property);
  return cls;
}
const text = () => [v.IsString(), v.MaxLength(1024)];
const PropertyValue = decorate(class PropertyValue {}, {
  id: [v.IsString(), v.IsNotEmpty()],
  value: [v.IsDefined()],
  origin: [...text(), v.IsNotEmpty()],
  trigger: [v.IsOptional(), ...text()],
});
const objectRules = {
  type: [v.IsString(), v.IsNotEmpty()],
  links: [v.IsOptional(), v.IsObject()],
  tags: [v.IsOptional(), v.IsArray(), v.ArrayMaxSize(10000), v.IsString({ each: true })],
  properties: [v.IsArray(), v.ArrayMaxSize(10000), v.ValidateNested({ each: true }), Type(() => PropertyValue)],
  metadata: [v.IsOptional(), v.IsObject()],
};
const WriteObject = decorate(class WriteObject {}, objectRules);
const IngestObject = decorate(class IngestObject {}, { environmentId: [v.IsString(), v.IsNotEmpty()], id: [v.IsString(), v.IsNotEmpty()], ...objectRules });
const Ingest = decorate(class Ingest {}, { objects: [v.IsArray(), v.ArrayMinSize(1), v.ArrayMaxSize(10000), v.ValidateNested({ each: true }), Type(() => IngestObject)] });

const object = (i) => ({
  environmentId: 'prod',
  id: `p-${i}`,
  type: 'person',
  tags: ['vip', 'x'],
  links: { worksFor: ['c-1'] },
  properties: Array.from({ length: 8 }, (_, k) => ({ id: `p${k}`, value: `value ${k} of ${i}`, origin: 'crm' })),
});
const pipe = createValidationPipe();

async function msPerBody(n, check) {
  for (let i = 0; i < Math.min(n, 3); i++) await check(i);
  const t0 = process.cpuUsage();
  for (let i = 0; i < n; i++) await check(i);
  const d = process.cpuUsage(t0);
  return (d.user + d.system) / n / 1000;
}

const ingests = Array.from({ length: 4 }, () => ({ objects: Array.from({ length: 10000 }, (_, i) => object(i)) }));
const puts = Array.from({ length: 1000 }, (_, i) => {
  const { environmentId: _e, id: _i, ...body } = object(i);
  return body;
});
const rows = [
  ['ingest of 10,000 objects', await msPerBody(5, (i) => checkIngestBody(ingests[i % 4])), await msPerBody(5, (i) => pipe.transform(ingests[i % 4], { type: 'body', metatype: Ingest }))],
  ['PUT of one object', await msPerBody(20000, (i) => checkWriteObjectBody(puts[i % 1000])), await msPerBody(20000, (i) => pipe.transform(puts[i % 1000], { type: 'body', metatype: WriteObject }))],
];
console.log('| body | by hand (write-body.ts) | class-validator | ratio |\n|---|--:|--:|--:|');
for (const [name, hand, decorated] of rows) console.log(`| ${name} | ${hand.toFixed(3)} ms | ${decorated.toFixed(3)} ms | ${(decorated / hand).toFixed(0)}× |`);
