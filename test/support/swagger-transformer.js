// Runs the Nest Swagger CLI plugin under ts-jest, so tests see the same DTO metadata as `nest build`.
const transformer = require('@nestjs/swagger/plugin');

module.exports.name = 'nestjs-swagger-transformer';
module.exports.version = 1;
module.exports.factory = (cs) =>
  transformer.before({ classValidatorShim: true, introspectComments: true, dtoFileNameSuffix: ['.dto.ts'] }, cs.program);
