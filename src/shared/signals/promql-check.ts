// Whether a PromQL expression parses, with Prometheus's own grammar (@prometheus-io/lezer-promql, the parser
// of the Prometheus web UI), so every query the console generates — history, the Grafana export — is checked
// without a server. The grammar checks syntax, not types (a range vector where an instant one belongs parses).
import { parser } from '@prometheus-io/lezer-promql';

/** Each place the expression does not parse, as "at column N: …", empty when it parses. */
export function promqlProblems(expr: string): string[] {
  if (expr.trim() === '') return ['the expression is empty'];
  const problems: string[] = [];
  parser.parse(expr).iterate({
    enter(node) {
      if (!node.type.isError) return;
      const near = expr.slice(Math.max(0, node.from - 12), node.from + 12);
      problems.push(
        node.from >= expr.length
          ? `at column ${node.from + 1}: the expression ends too early (an unclosed bracket or a missing operand)`
          : `at column ${node.from + 1}: unexpected text near “${near}”`,
      );
    },
  });
  return problems;
}

export function parsesAsPromQL(expr: string): boolean {
  return promqlProblems(expr).length === 0;
}
