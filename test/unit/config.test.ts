import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, parseConfig } from '../../src/core/config.js';
import { GuardError } from '../../src/core/errors.js';

function configError(text: string): GuardError {
  try {
    parseConfig(text, 'HEAD:guard.config.json');
  } catch (err) {
    if (err instanceof GuardError) return err;
    throw err;
  }
  throw new Error(`expected ${text} to be rejected`);
}

describe('parseConfig', () => {
  it('gives the defaults for a missing file and an empty object', () => {
    expect(parseConfig(undefined)).toEqual(DEFAULT_CONFIG);
    expect(parseConfig('{}')).toEqual(DEFAULT_CONFIG);
  });

  it('merges the keys that are given', () => {
    const c = parseConfig('{"lineThreshold": 10, "preview": {"maxLines": 5}}');
    expect(c.lineThreshold).toBe(10);
    expect(c.preview).toEqual({ contextLines: 3, maxLines: 5 });
    expect(c.changeRatio).toBe(0.5);
  });

  it.each([
    ['{"lineThreshold": "100"}', 'lineThreshold'],
    ['{"lineTreshold": 100}', 'lineTreshold'],
    ['{"preview": {"maxLine": 2}}', 'preview.maxLine'],
    ['{"protect": [1]}', 'protect.0'],
    ['{"changeRatio": 2}', 'changeRatio'],
    ['{"maxFileBytes": -1}', 'maxFileBytes'],
  ])('rejects %s naming the key', (text, key) => {
    const err = configError(text);
    expect(err.code).toBe('E_CONFIG');
    expect(err.exitCode).toBe(2);
    expect(err.message).toContain(`"${key}"`);
    expect(err.message).toContain('HEAD:guard.config.json');
  });

  it('rejects JSON that is not an object or not JSON', () => {
    expect(configError('[]').code).toBe('E_CONFIG');
    expect(configError('{').message).toMatch(/not valid JSON/);
  });
});
