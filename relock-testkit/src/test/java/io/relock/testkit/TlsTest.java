package io.relock.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.Test;

class TlsTest {

    private static final int TIMEOUT_MILLIS = 5000;

    @Test
    void supportsTlsTellsWhetherATlsServerStarts() {
        RedisServer.Builder builder = RedisServer.builder().tls();

        if (RedisBinary.locate().supportsTls()) {
            try (RedisServer server = builder.start()) {
                assertThat(server.isTls()).isTrue();
            }
        } else {
            assertThatThrownBy(builder::start).isInstanceOf(IllegalStateException.class).hasMessageContaining("tls-port");
        }
    }

    @Test
    void tlsServerAnswersAClientThatTrustsTheTestkitCaAndChecksTheHostName() throws Exception {
        assumeTrue(RedisBinary.locate().supportsTls(), "redis-server is built with TLS");
        try (RedisServer server = RedisServer.builder().tls().start()) {
            assertThat(server.tlsPort()).isPositive().isNotEqualTo(server.port());
            assertThat(server.tlsUri()).isEqualTo("rediss://127.0.0.1:" + server.tlsPort());

            assertThat(call(TlsCertificates.get().sslContext(), server.tlsPort(), "SET", "k", "over tls")).isEqualTo("OK");

            assertThat(server.command("GET", "k")).isEqualTo("over tls");
        }
    }

    @Test
    void clientThatDoesNotTrustTheCaIsRefused() throws Exception {
        assumeTrue(RedisBinary.locate().supportsTls(), "redis-server is built with TLS");
        try (RedisServer server = RedisServer.builder().tls().start()) {
            SSLContext jdkDefault = SSLContext.getInstance("TLS");
            jdkDefault.init(null, null, null);

            assertThatThrownBy(() -> call(jdkDefault, server.tlsPort(), "PING")).isInstanceOf(SSLHandshakeException.class);
        }
    }

    @Test
    void restartKeepsTheTlsPort() throws Exception {
        assumeTrue(RedisBinary.locate().supportsTls(), "redis-server is built with TLS");
        try (RedisServer server = RedisServer.builder().tls().start()) {
            int tlsPort = server.tlsPort();

            server.restart();

            assertThat(server.tlsPort()).isEqualTo(tlsPort);
            assertThat(call(TlsCertificates.get().sslContext(), tlsPort, "PING")).isEqualTo("PONG");
        }
    }

    @Test
    void certificatesAreACaAndAServerCertificateForLoopbackIssuedByIt() throws Exception {
        TlsCertificates certificates = TlsCertificates.get();
        X509Certificate ca = read(certificates.caCertificate());
        X509Certificate server = read(certificates.certificate());

        assertThat(TlsCertificates.get()).isSameAs(certificates);
        assertThat(ca.getBasicConstraints()).isGreaterThanOrEqualTo(0);
        assertThat(server.getBasicConstraints()).isEqualTo(-1);
        assertThat(server.getIssuerX500Principal()).isEqualTo(ca.getSubjectX500Principal());
        server.verify(ca.getPublicKey());
        ca.verify(ca.getPublicKey());
        server.checkValidity();
        assertThat(server.getSubjectAlternativeNames()).containsExactlyInAnyOrder(List.of(7, "127.0.0.1"), List.of(2, "localhost"));
        assertThat(server.getExtendedKeyUsage()).contains("1.3.6.1.5.5.7.3.1");
        assertThat(Files.readString(certificates.privateKey())).startsWith("-----BEGIN PRIVATE KEY-----");
        assertThat(certificates.trustStore().isCertificateEntry("relock-testkit-ca")).isTrue();
    }

    @Test
    void serverWithoutTlsHasNoTlsPort() {
        try (RedisServer server = RedisServer.start()) {
            assertThat(server.isTls()).isFalse();
            assertThatThrownBy(server::tlsPort).isInstanceOf(IllegalStateException.class).hasMessageContaining("tls()");
            assertThatThrownBy(server::tlsUri).isInstanceOf(IllegalStateException.class);
        }
    }

    @Test
    void builderRejectsTlsTwiceAndTlsForASentinel() {
        assertThatThrownBy(() -> RedisServer.builder().tls().tls())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("tls() was already set");
        assertThatThrownBy(() -> RedisServer.builder().sentinel().tls())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("conflicts");
        assertThatThrownBy(() -> RedisServer.builder().arg("tls-port", "1234"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--tls-port");
    }

    /** One command over TLS, checking the certificate's host name as HTTPS clients (and Lettuce) do. */
    private static Object call(SSLContext context, int port, String... command) throws IOException {
        try (SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket(RedisServer.HOST, port)) {
            socket.setSoTimeout(TIMEOUT_MILLIS);
            SSLParameters parameters = socket.getSSLParameters();
            parameters.setEndpointIdentificationAlgorithm("HTTPS");
            socket.setSSLParameters(parameters);
            socket.startHandshake();
            OutputStream out = socket.getOutputStream();
            out.write(Resp.encode(command));
            out.flush();
            InputStream in = new BufferedInputStream(socket.getInputStream());
            return Resp.read(in);
        }
    }

    private static X509Certificate read(Path pem) throws IOException, GeneralSecurityException {
        try (InputStream in = Files.newInputStream(pem)) {
            return (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
        }
    }
}
