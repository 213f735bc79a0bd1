/**
 * The Dockerfile as a parser reads it (dockerfile-ast, the parser of VS Code's Docker support):
 * its stages, and the exec forms of their instructions. No Docker engine is involved.
 */
import { DockerfileParser, ModifiableInstruction, type Instruction } from 'dockerfile-ast';

export interface Stage {
  readonly name: string | undefined;
  /** The image, with the Dockerfile's initial ARGs put in. */
  readonly image: string;
  readonly instructions: readonly Instruction[];
}

export function readStages(text: string): Stage[] {
  const dockerfile = DockerfileParser.parse(text);
  const args = new Map<string, string>();
  for (const arg of dockerfile.getInitialARGs()) {
    const property = arg.getProperty();
    if (property !== null) args.set(property.getName(), property.getValue() ?? '');
  }
  const stages: { name: string | undefined; image: string; instructions: Instruction[] }[] = [];
  for (const instruction of dockerfile.getInstructions()) {
    if (instruction.getKeyword() === 'FROM') {
      const [image = '', as, name] = instruction.getArguments().map((a) => a.getValue());
      stages.push({
        name: as?.toUpperCase() === 'AS' ? name : undefined,
        image: image.replace(/\$\{(\w+)\}|\$(\w+)/g, (_, a?: string, b?: string) => {
          return args.get((a ?? b)!) ?? '';
        }),
        instructions: [],
      });
    } else {
      stages.at(-1)?.instructions.push(instruction);
    }
  }
  return stages;
}

export function instructions(stage: Stage, keyword: string): Instruction[] {
  return stage.instructions.filter((i) => i.getKeyword() === keyword);
}

/** The arguments, as words (flags are not arguments). */
export function words(instruction: Instruction): string[] {
  return instruction.getArguments().map((a) => a.getValue());
}

/** CMD, ENTRYPOINT or HEALTHCHECK CMD in exec form (a JSON array); undefined in shell form. */
export function execForm(instruction: Instruction): string[] | undefined {
  const content = (instruction.getArgumentsContent() ?? '').trim();
  const json =
    instruction.getKeyword() === 'HEALTHCHECK' ? content.replace(/^CMD\s+/, '') : content;
  try {
    const parsed: unknown = JSON.parse(json);
    return Array.isArray(parsed) && parsed.every((w) => typeof w === 'string') ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** A flag's value (`--from=build` → `build`). */
export function flag(instruction: Instruction, name: string): string | undefined {
  if (!(instruction instanceof ModifiableInstruction)) return undefined;
  const found = instruction.getFlags().find((f) => f.getName() === name);
  return found?.getValue() ?? undefined;
}
