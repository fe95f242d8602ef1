package io.relock.testkit;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.MessageDigest;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * The TLS certificates of the testkit's {@linkplain RedisServer.Builder#tls() TLS servers}: a
 * certificate authority made for this JVM, and a server certificate it issued for
 * {@code 127.0.0.1} and {@code localhost}, so clients can verify the server's identity as in
 * production.
 *
 * <p>Generated with the JDK alone (EC P-256 keys, SHA256withECDSA, no {@code openssl} or
 * {@code keytool}) on first use, once per JVM, as PEM files in this JVM's testkit directory,
 * which goes away with the JVM. The CA's private key is never written. Valid from a day before
 * their creation for ten years.
 *
 * <pre>{@code
 * try (RedisServer server = RedisServer.builder().tls().start()) {
 *     SSLContext context = TlsCertificates.get().sslContext();   // trusts the CA
 *     ... connect to server.tlsUri() ...
 * }
 * }</pre>
 *
 * <p>Immutable and thread-safe.
 */
public final class TlsCertificates {

    private static final String CA_NAME = "Relock testkit CA";
    private static final String SERVER_NAME = "localhost";
    private static final Duration BACKDATE = Duration.ofDays(1);
    private static final Duration VALIDITY = Duration.ofDays(3650);
    private static final String SIGNATURE_ALGORITHM = "SHA256withECDSA";

    private static final String OID_ECDSA_WITH_SHA256 = "1.2.840.10045.4.3.2";
    private static final String OID_COMMON_NAME = "2.5.4.3";
    private static final String OID_BASIC_CONSTRAINTS = "2.5.29.19";
    private static final String OID_KEY_USAGE = "2.5.29.15";
    private static final String OID_EXTENDED_KEY_USAGE = "2.5.29.37";
    private static final String OID_SUBJECT_ALT_NAME = "2.5.29.17";
    private static final String OID_SUBJECT_KEY_IDENTIFIER = "2.5.29.14";
    private static final String OID_AUTHORITY_KEY_IDENTIFIER = "2.5.29.35";
    private static final String OID_SERVER_AUTH = "1.3.6.1.5.5.7.3.1";
    private static final String OID_CLIENT_AUTH = "1.3.6.1.5.5.7.3.2";

    private static final int TAG_BOOLEAN = 0x01;
    private static final int TAG_INTEGER = 0x02;
    private static final int TAG_BIT_STRING = 0x03;
    private static final int TAG_OCTET_STRING = 0x04;
    private static final int TAG_OID = 0x06;
    private static final int TAG_UTF8_STRING = 0x0C;
    private static final int TAG_UTC_TIME = 0x17;
    private static final int TAG_GENERALIZED_TIME = 0x18;
    private static final int TAG_SEQUENCE = 0x30;
    private static final int TAG_SET = 0x31;
    private static final int TAG_EXPLICIT_0 = 0xA0;
    private static final int TAG_EXPLICIT_3 = 0xA3;
    private static final int TAG_KEY_IDENTIFIER = 0x80;
    private static final int TAG_SAN_DNS_NAME = 0x82;
    private static final int TAG_SAN_IP_ADDRESS = 0x87;

    /** keyUsage bits (RFC 5280): keyCertSign and cRLSign for the CA, digitalSignature for the server. */
    private static final byte[] CA_KEY_USAGE = {(byte) 0x06};
    private static final int CA_KEY_USAGE_UNUSED_BITS = 1;
    private static final byte[] SERVER_KEY_USAGE = {(byte) 0x80};
    private static final int SERVER_KEY_USAGE_UNUSED_BITS = 7;
    private static final int KEY_IDENTIFIER_LENGTH = 20;

    private static final Object LOCK = new Object();
    private static TlsCertificates generated; // guarded by LOCK

    private final Path caCertificate;
    private final Path certificate;
    private final Path privateKey;
    private final X509Certificate ca;

    private TlsCertificates(Path caCertificate, Path certificate, Path privateKey, X509Certificate ca) {
        this.caCertificate = caCertificate;
        this.certificate = certificate;
        this.privateKey = privateKey;
        this.ca = ca;
    }

    /**
     * Returns this JVM's certificates, generating them on the first call.
     *
     * @return the certificates
     * @throws IllegalStateException if the JDK cannot generate EC keys or sign with them
     * @throws UncheckedIOException if the files cannot be written
     */
    public static TlsCertificates get() {
        synchronized (LOCK) {
            if (generated == null) {
                generated = generate(Workspace.jvmDirectory().resolve("tls"));
            }
            return generated;
        }
    }

    /** {@return the CA's certificate (PEM): what clients trust, e.g. {@code tls-ca-cert-file} or Lettuce's {@code SslOptions.trustManager(File)}} */
    public Path caCertificate() {
        return caCertificate;
    }

    /** {@return the server's certificate (PEM), issued by the CA for {@code 127.0.0.1} and {@code localhost}} */
    public Path certificate() {
        return certificate;
    }

    /** {@return the server's private key (unencrypted PKCS#8 PEM)} */
    public Path privateKey() {
        return privateKey;
    }

    /**
     * Returns a new in-memory key store (PKCS12, no password) whose only entry is the CA
     * certificate, as a trusted certificate named {@code relock-testkit-ca}.
     *
     * @return the trust store
     * @throws IllegalStateException if the JDK has no PKCS12 key stores
     */
    public KeyStore trustStore() {
        try {
            KeyStore store = KeyStore.getInstance("PKCS12");
            store.load(null, null);
            store.setCertificateEntry("relock-testkit-ca", ca);
            return store;
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalStateException("cannot create a trust store for the testkit CA", e);
        }
    }

    /**
     * Returns a new TLS client context that trusts the CA and nothing else.
     *
     * @return the context, initialised
     * @throws IllegalStateException if the JDK cannot create it
     */
    public SSLContext sslContext() {
        try {
            TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            trust.init(trustStore());
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(null, trust.getTrustManagers(), null);
            return context;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("cannot create a TLS context that trusts the testkit CA", e);
        }
    }

    @Override
    public String toString() {
        return "TLS certificates in " + caCertificate.getParent();
    }

    private static TlsCertificates generate(Path directory) {
        byte[] caDer;
        byte[] serverDer;
        PrivateKey serverKey;
        try {
            KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
            generator.initialize(new ECGenParameterSpec("secp256r1"));
            KeyPair caKeys = generator.generateKeyPair();
            KeyPair serverKeys = generator.generateKeyPair();
            serverKey = serverKeys.getPrivate();
            Instant now = Instant.now();
            byte[] caKeyId = keyIdentifier(caKeys.getPublic());
            caDer = certificate(CA_NAME, caKeys.getPublic(), CA_NAME, caKeys.getPrivate(), now, List.of(
                    extension(OID_BASIC_CONSTRAINTS, true, sequence(bool(true))),
                    extension(OID_KEY_USAGE, true, bitString(CA_KEY_USAGE, CA_KEY_USAGE_UNUSED_BITS)),
                    extension(OID_SUBJECT_KEY_IDENTIFIER, false, der(TAG_OCTET_STRING, caKeyId))));
            serverDer = certificate(SERVER_NAME, serverKeys.getPublic(), CA_NAME, caKeys.getPrivate(), now, List.of(
                    extension(OID_BASIC_CONSTRAINTS, true, sequence()),
                    extension(OID_KEY_USAGE, true, bitString(SERVER_KEY_USAGE, SERVER_KEY_USAGE_UNUSED_BITS)),
                    extension(OID_SUBJECT_KEY_IDENTIFIER, false, der(TAG_OCTET_STRING, keyIdentifier(serverKeys.getPublic()))),
                    extension(OID_AUTHORITY_KEY_IDENTIFIER, false, sequence(der(TAG_KEY_IDENTIFIER, caKeyId))),
                    extension(OID_EXTENDED_KEY_USAGE, false, sequence(oid(OID_SERVER_AUTH), oid(OID_CLIENT_AUTH))),
                    extension(OID_SUBJECT_ALT_NAME, false, sequence(
                            der(TAG_SAN_IP_ADDRESS, new byte[] {127, 0, 0, 1}),
                            der(TAG_SAN_DNS_NAME, SERVER_NAME.getBytes(StandardCharsets.US_ASCII))))));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("cannot generate the testkit's TLS certificates", e);
        }
        X509Certificate ca = parse(caDer);
        Path caFile = directory.resolve("ca.crt");
        Path certificateFile = directory.resolve("server.crt");
        Path keyFile = directory.resolve("server.key");
        try {
            Workspace.createPrivateDirectories(directory);
            Files.writeString(caFile, pem("CERTIFICATE", caDer), StandardCharsets.US_ASCII);
            Files.writeString(certificateFile, pem("CERTIFICATE", serverDer), StandardCharsets.US_ASCII);
            Files.writeString(keyFile, pem("PRIVATE KEY", serverKey.getEncoded()), StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the testkit's TLS certificates to " + directory, e);
        }
        return new TlsCertificates(caFile, certificateFile, keyFile, ca);
    }

    /** Returns a signed X.509 v3 certificate (DER) for {@code subject}'s key, issued by {@code issuer}. */
    private static byte[] certificate(String subject, PublicKey subjectKey, String issuer, PrivateKey issuerKey, Instant now,
            List<byte[]> extensions) throws GeneralSecurityException {
        byte[] algorithm = sequence(oid(OID_ECDSA_WITH_SHA256));
        byte[] tbs = sequence(
                der(TAG_EXPLICIT_0, integer(BigInteger.TWO)), // v3
                integer(new BigInteger(63, new SecureRandom()).add(BigInteger.ONE)),
                algorithm,
                name(issuer),
                sequence(time(now.minus(BACKDATE)), time(now.plus(VALIDITY))),
                name(subject),
                subjectKey.getEncoded(), // already a DER SubjectPublicKeyInfo
                der(TAG_EXPLICIT_3, sequence(extensions.toArray(new byte[0][]))));
        Signature signature = Signature.getInstance(SIGNATURE_ALGORITHM);
        signature.initSign(issuerKey);
        signature.update(tbs);
        return sequence(tbs, algorithm, bitString(signature.sign(), 0));
    }

    /** RFC 7093, method 4: the leftmost 160 bits of the SHA-256 hash of the SubjectPublicKeyInfo. */
    private static byte[] keyIdentifier(PublicKey key) throws GeneralSecurityException {
        return Arrays.copyOf(MessageDigest.getInstance("SHA-256").digest(key.getEncoded()), KEY_IDENTIFIER_LENGTH);
    }

    private static X509Certificate parse(byte[] der) {
        try {
            return (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(new ByteArrayInputStream(der));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("the generated CA certificate does not parse", e);
        }
    }

    private static String pem(String type, byte[] der) {
        String base64 = Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der);
        return "-----BEGIN " + type + "-----\n" + base64 + "\n-----END " + type + "-----\n";
    }

    private static byte[] name(String commonName) {
        return sequence(der(TAG_SET, sequence(oid(OID_COMMON_NAME), der(TAG_UTF8_STRING,
                commonName.getBytes(StandardCharsets.UTF_8)))));
    }

    private static byte[] extension(String oid, boolean critical, byte[] value) {
        return critical
                ? sequence(oid(oid), bool(true), der(TAG_OCTET_STRING, value))
                : sequence(oid(oid), der(TAG_OCTET_STRING, value));
    }

    /** UTCTime until 2049, GeneralizedTime from 2050 on (RFC 5280, 4.1.2.5). */
    private static byte[] time(Instant instant) {
        ZonedDateTime utc = instant.atZone(ZoneOffset.UTC);
        boolean utcTime = utc.getYear() < 2050;
        String text = utc.format(DateTimeFormatter.ofPattern(utcTime ? "yyMMddHHmmss'Z'" : "yyyyMMddHHmmss'Z'"));
        return der(utcTime ? TAG_UTC_TIME : TAG_GENERALIZED_TIME, text.getBytes(StandardCharsets.US_ASCII));
    }

    private static byte[] sequence(byte[]... elements) {
        return der(TAG_SEQUENCE, elements);
    }

    private static byte[] integer(BigInteger value) {
        return der(TAG_INTEGER, value.toByteArray());
    }

    private static byte[] bool(boolean value) {
        return der(TAG_BOOLEAN, new byte[] {value ? (byte) 0xFF : 0});
    }

    private static byte[] bitString(byte[] bits, int unusedBits) {
        byte[] content = new byte[bits.length + 1];
        content[0] = (byte) unusedBits;
        System.arraycopy(bits, 0, content, 1, bits.length);
        return der(TAG_BIT_STRING, content);
    }

    private static byte[] oid(String dotted) {
        String[] parts = dotted.split("\\.");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        writeBase128(out, Long.parseLong(parts[0]) * 40 + Long.parseLong(parts[1]));
        for (int i = 2; i < parts.length; i++) {
            writeBase128(out, Long.parseLong(parts[i]));
        }
        return der(TAG_OID, out.toByteArray());
    }

    private static void writeBase128(ByteArrayOutputStream out, long value) {
        int groups = Math.max(1, (64 - Long.numberOfLeadingZeros(value) + 6) / 7);
        for (int group = groups - 1; group >= 0; group--) {
            int bits = (int) ((value >>> (7 * group)) & 0x7F);
            out.write(group == 0 ? bits : bits | 0x80);
        }
    }

    /** Returns tag, definite length and the concatenated contents. */
    private static byte[] der(int tag, byte[]... contents) {
        int length = 0;
        for (byte[] content : contents) {
            length += content.length;
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream(length + 6);
        out.write(tag);
        if (length < 0x80) {
            out.write(length);
        } else {
            int bytes = (32 - Integer.numberOfLeadingZeros(length) + 7) / 8;
            out.write(0x80 | bytes);
            for (int i = bytes - 1; i >= 0; i--) {
                out.write(length >>> (8 * i));
            }
        }
        for (byte[] content : contents) {
            out.writeBytes(content);
        }
        return out.toByteArray();
    }
}
