import type { RawFinding } from './types.js';
export async function analysePython(_text: string): Promise<RawFinding[]> {
  return [];
}
