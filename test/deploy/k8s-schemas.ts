/**
 * Kubernetes objects checked against the API's schemas, offline, with kubernetes-models (generated
 * from the Kubernetes OpenAPI spec, 1.33 here). Its validators check types, required fields and
 * formats but, like the OpenAPI spec, accept fields that do not exist (a misspelled
 * `readinesProbe` passes; the API server refuses it). So the objects are also type-checked by the
 * TypeScript compiler against the package's own interfaces, whose excess-property check names
 * such a field.
 */
import { Deployment, StatefulSet } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Secret, Service } from 'kubernetes-models/v1';
import { join } from 'node:path';
import * as ts from 'typescript';
import { REPO_ROOT } from './app-facts';
import type { Located } from './kustomize-base';

interface Validating {
  validate(): void;
}

/** The kinds this deployment uses; a new kind is added here, with its model. */
const MODELS: Readonly<Record<string, new (data: never) => Validating>> = {
  'apps/v1/Deployment': Deployment,
  'apps/v1/StatefulSet': StatefulSet,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Service': Service,
};

const modelKey = ({ object }: Located): string => `${object.apiVersion}/${object.kind}`;
const where = (l: Located): string => `k8s/${l.file} ${l.object.kind} ${l.object.metadata?.name}`;

/** Type, required-field and format errors, per object. */
export function schemaProblems(objects: readonly Located[]): string[] {
  return objects.flatMap((located) => {
    const Model = MODELS[modelKey(located)];
    if (Model === undefined) return [`${where(located)}: no schema for ${modelKey(located)}`];
    try {
      new Model(located.object as never).validate();
      return [];
    } catch (error) {
      return [`${where(located)}: ${error instanceof Error ? error.message : String(error)}`];
    }
  });
}

/** Fields the API does not have (and type errors again), found by the TypeScript compiler. */
export function unknownFieldProblems(objects: readonly Located[]): string[] {
  const known = objects.filter((l) => MODELS[modelKey(l)] !== undefined);
  const lines = known.flatMap(({ object }, i) => {
    const module = `kubernetes-models/${object.apiVersion}/${object.kind}`;
    return [
      `import type { I${object.kind} as T${i} } from '${module}';`,
      `export const object${i}: T${i} = ${JSON.stringify(object)};`,
    ];
  });
  const file = join(REPO_ROOT, 'test', 'deploy', '__k8s_objects__.ts');
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
    module: ts.ModuleKind.CommonJS,
    moduleResolution: ts.ModuleResolutionKind.Node10,
    target: ts.ScriptTarget.ES2022,
  };
  const host = ts.createCompilerHost(options);
  const text = lines.join('\n');
  const getSourceFile = host.getSourceFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  host.getSourceFile = (name, language, ...rest) =>
    name === file
      ? ts.createSourceFile(name, text, language)
      : getSourceFile(name, language, ...rest);
  host.fileExists = (name) => name === file || fileExists(name);
  const program = ts.createProgram([file], options, host);
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const line =
      d.file === undefined || d.start === undefined
        ? -1
        : d.file.getLineAndCharacterOfPosition(d.start).line;
    const located = known[Math.floor(line / 2)];
    const message = ts.flattenDiagnosticMessageText(d.messageText, ' ');
    return `${located === undefined ? '?' : where(located)}: ${message}`;
  });
}
