import { join, relative, sep } from 'node:path';
import * as ts from 'typescript';
import { ROOT } from '../support/paths';

/**
 * One way to run SQL (docs/architecture.md, "Running SQL"): every statement of apps/ and libs/
 * runs through SqlExecutor (libs/platform/src/database/sql-executor.ts), which carries read
 * routing, cancellation, metrics and timeouts. So no other file calls into pg or TypeORM
 * itself: no `dataSource.query`, `manager.query`, `queryRunner.query`, `dataSource.transaction`,
 * `pool.query`, `new Pool()`..., however it got hold of the object (an injected DataSource, or
 * one reached through another object without importing TypeORM at all). Checked on the types
 * (a program of apps/ and libs/ with the repository's tsconfig): a call is a fault when the
 * function it resolves to is declared by pg or TypeORM.
 */

/** The executor's own files, where pg and TypeORM are called, each for a reason. */
const EXECUTOR_FILES: Record<string, string> = {
  'libs/platform/src/database/sql-executor.ts': 'the executor: transactions, its connections',
  'libs/platform/src/database/postgres.ts': 'one statement on a pool (runOnPool), the pools',
  'libs/platform/src/database/notification-listener.ts': 'the LISTEN/NOTIFY connections the executor makes',
  'libs/platform/src/database/migrations.ts': "TypeORM's migration runner and CLI data source",
  'libs/platform/src/replicas/read-router.ts': "the executor's read routing: the replicas' pools",
};

/** Migration classes run their statements on the QueryRunner TypeORM's migration runner hands them. */
const MIGRATION_CLASSES = /^apps\/[^/]+\/src\/database\/migrations\//;

/** Where pg and TypeORM (and the Nest module over TypeORM) declare what they export. */
const DRIVERS = /\/node_modules\/(typeorm|pg|pg-pool|@types\/pg|@types\/pg-pool|@nestjs\/typeorm)\//;

const repoPath = (file: string) => relative(ROOT, file).split(sep).join('/');

/** The repository's compiler options (tsconfig.json). */
function compilerOptions(): ts.CompilerOptions {
  const parsed = ts.getParsedCommandLineOfConfigFile(
    join(ROOT, 'tsconfig.json'),
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined },
  );
  if (!parsed) throw new Error('tsconfig.json not read');
  return { ...parsed.options, noEmit: true };
}

/** The TypeScript files of apps/ and libs/ that tsconfig.json includes. */
function sourceFiles(): string[] {
  const parsed = ts.getParsedCommandLineOfConfigFile(
    join(ROOT, 'tsconfig.json'),
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined },
  )!;
  return parsed.fileNames.filter((f) => /^(apps|libs)\//.test(repoPath(f)));
}

/** A program of `files`, plus `virtual` files (repository path → text) that exist only in memory. */
function programOf(files: string[], virtual: Record<string, string> = {}): ts.Program {
  const options = compilerOptions();
  const host = ts.createCompilerHost(options);
  const inMemory = new Map(Object.entries(virtual).map(([path, text]) => [join(ROOT, path), text]));
  const getSourceFile = host.getSourceFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  const readFile = host.readFile.bind(host);
  host.getSourceFile = (name, languageVersion, ...rest) => {
    const text = inMemory.get(name);
    return text !== undefined ? ts.createSourceFile(name, text, languageVersion, true) : getSourceFile(name, languageVersion, ...rest);
  };
  host.fileExists = (name) => inMemory.has(name) || fileExists(name);
  const directoryExists = host.directoryExists?.bind(host);
  host.directoryExists = (name) => [...inMemory.keys()].some((f) => f.startsWith(`${name}/`)) || (directoryExists?.(name) ?? true);
  host.readFile = (name) => inMemory.get(name) ?? readFile(name);
  return ts.createProgram([...files, ...inMemory.keys()], options, host);
}

/** Where a symbol is declared: `Name of pg` or `Name of TypeORM` when pg or TypeORM declares it, else undefined. */
function declaredBy(checker: ts.TypeChecker, symbol: ts.Symbol | undefined): string | undefined {
  if (symbol && symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
  const file = symbol?.declarations?.[0]?.getSourceFile().fileName.split(sep).join('/');
  if (!symbol || !file || !DRIVERS.test(file)) return undefined;
  return `${symbol.name} of ${/\/typeorm\//.test(file) ? 'TypeORM' : 'pg'}`;
}

/**
 * Whether calling `callee` calls into pg or TypeORM: a method of an object whose type they
 * declare (`dataSource.query`, `m.query`, `pool.connect`: the receiver's type, so an object
 * reached through others counts too), or a function or class they export (`new Pool()`,
 * `InjectDataSource()`). Only the callee is looked at, never the call's arguments and
 * callbacks, which keeps the check to seconds.
 */
function driverOf(checker: ts.TypeChecker, callee: ts.Expression): string | undefined {
  if (ts.isPropertyAccessExpression(callee) || ts.isElementAccessExpression(callee)) {
    const type = checker.getTypeAtLocation(callee.expression);
    const owner = declaredBy(checker, type.getSymbol() ?? type.aliasSymbol);
    if (owner) return `${owner.replace(' of ', `.${ts.isPropertyAccessExpression(callee) ? callee.name.text : '[]'} of `)}`;
    return undefined;
  }
  return declaredBy(checker, checker.getSymbolAtLocation(callee));
}

/** `file:line: callee (Owner.member of pg or TypeORM)` for every call into pg or TypeORM outside the executor. */
export function sqlExecutorViolations(program: ts.Program, files: string[]): string[] {
  const checker = program.getTypeChecker();
  const out: string[] = [];
  for (const name of files) {
    const path = repoPath(name);
    if (EXECUTOR_FILES[path] || MIGRATION_CLASSES.test(path)) continue;
    const source = program.getSourceFile(name);
    if (!source) throw new Error(`${path} is not in the program`);
    const visit = (node: ts.Node): void => {
      // Calls (decorators included: their expression is a call) and constructions.
      if (ts.isCallExpression(node) || ts.isNewExpression(node)) {
        const driver = driverOf(checker, node.expression);
        if (driver) {
          const { line } = source.getLineAndCharacterOfPosition(node.getStart(source));
          out.push(`${path}:${line + 1}: ${node.expression.getText(source)} (${driver})`);
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return out;
}

describe('one SQL executor', () => {
  const files = sourceFiles();
  const fixtures: Record<string, string> = {
    // Every way a file could run a statement around the executor.
    'apps/fixture/src/bad.repository.ts': [
      "import { DataSource, EntityManager, QueryRunner } from 'typeorm';",
      "import { Client, Pool } from 'pg';",
      'export class BadRepository {',
      '  constructor(readonly dataSource: DataSource, private readonly manager: EntityManager, private readonly queryRunner: QueryRunner, private readonly pool: Pool) {}',
      '  async run(): Promise<void> {',
      "    await this.dataSource.query('SELECT 1');",
      "    await this.manager.query('SELECT 1');",
      "    await this.queryRunner.query('SELECT 1');",
      "    await this.dataSource.transaction(async (m) => m.query('SELECT 1'));",
      '    await this.manager.transaction(async () => undefined);',
      "    await this.pool.query('SELECT 1');",
      "    await new Client({ connectionString: 'postgres://x' }).connect();",
      '    this.dataSource.createQueryRunner();',
      '  }',
      '}',
      '',
    ].join('\n'),
    // TypeORM reached through another object: nothing imported from it here.
    'apps/fixture/src/bad.service.ts': [
      "import { BadRepository } from './bad.repository';",
      'export class BadService {',
      '  constructor(private readonly repository: BadRepository) {}',
      '  run(): Promise<number> {',
      '    return this.repository.dataSource.transaction(async () => 1);',
      '  }',
      '}',
      '',
    ].join('\n'),
    // The executor, and a migration class on the QueryRunner TypeORM hands it: fine.
    'apps/fixture/src/good.repository.ts': [
      "import { SqlExecutor } from '@app/platform';",
      'export class GoodRepository {',
      '  constructor(private readonly sql: SqlExecutor) {}',
      '  async run(): Promise<void> {',
      "    await this.sql.rows('SELECT 1');",
      "    await this.sql.transaction(async (tx) => tx.rows('SELECT 1'));",
      '  }',
      '}',
      '',
    ].join('\n'),
    'apps/fixture/src/database/migrations/1700000000000-Fixture.ts': [
      "import { MigrationInterface, QueryRunner } from 'typeorm';",
      'export class Fixture1700000000000 implements MigrationInterface {',
      "  async up(q: QueryRunner): Promise<void> { await q.query('SELECT 1'); }",
      '  async down(): Promise<void> {}',
      '}',
      '',
    ].join('\n'),
  };
  // One program for the tree and the fixtures (building it is what takes the time).
  const program = programOf(files, fixtures);

  it('reads the whole tree, the executor included', () => {
    expect(files.length).toBeGreaterThan(100);
    for (const file of Object.keys(EXECUTOR_FILES)) expect(files.map(repoPath)).toContain(file);
  });

  it('no file outside the executor calls pg or TypeORM', () => {
    expect(sqlExecutorViolations(program, files)).toEqual([]);
  });

  it('sees each way around it', () => {
    expect(
      sqlExecutorViolations(
        program,
        Object.keys(fixtures).map((f) => join(ROOT, f)),
      ),
    ).toEqual([
      'apps/fixture/src/bad.repository.ts:6: this.dataSource.query (DataSource.query of TypeORM)',
      'apps/fixture/src/bad.repository.ts:7: this.manager.query (EntityManager.query of TypeORM)',
      'apps/fixture/src/bad.repository.ts:8: this.queryRunner.query (QueryRunner.query of TypeORM)',
      'apps/fixture/src/bad.repository.ts:9: this.dataSource.transaction (DataSource.transaction of TypeORM)',
      'apps/fixture/src/bad.repository.ts:9: m.query (EntityManager.query of TypeORM)',
      'apps/fixture/src/bad.repository.ts:10: this.manager.transaction (EntityManager.transaction of TypeORM)',
      'apps/fixture/src/bad.repository.ts:11: this.pool.query (Pool.query of pg)',
      "apps/fixture/src/bad.repository.ts:12: new Client({ connectionString: 'postgres://x' }).connect (Client.connect of pg)",
      'apps/fixture/src/bad.repository.ts:12: Client (Client of pg)',
      'apps/fixture/src/bad.repository.ts:13: this.dataSource.createQueryRunner (DataSource.createQueryRunner of TypeORM)',
      'apps/fixture/src/bad.service.ts:5: this.repository.dataSource.transaction (DataSource.transaction of TypeORM)',
    ]);
  });
});
