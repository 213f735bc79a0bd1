import { failureReason } from './failure-reason';

const coded = (message: string, code: string): Error => Object.assign(new Error(message), { code });

describe('failureReason', () => {
  it("keeps nats.js's message and code on one line", () => {
    const error = coded("'Authorization Violation'", 'AUTHORIZATION_VIOLATION');
    expect(failureReason(error, {})).toBe('Authorization Violation (AUTHORIZATION_VIOLATION)');
    expect(failureReason(coded('CONNECTION_REFUSED', 'CONNECTION_REFUSED'), {})).toBe(
      'CONNECTION_REFUSED',
    );
  });

  it("takes the reason out of OpenSSL's error line", () => {
    const error = coded(
      '804CE2C1ED7F0000:error:0A000412:SSL routines:ssl3_read_bytes:sslv3 alert bad certificate:../deps/openssl/openssl/ssl/record/rec_layer_s3.c:1601:SSL alert number 42\n',
      'ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE',
    );
    expect(failureReason(error, {})).toBe(
      'sslv3 alert bad certificate (ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE)',
    );
  });

  it('blanks the token and the password should a message carry them', () => {
    const error = new Error('server said: tok-123456 / pass-abcdef');
    const options = { token: 'tok-123456', user: 'u', pass: 'pass-abcdef' };
    expect(failureReason(error, options)).toBe('server said: *** / ***');
  });
});
