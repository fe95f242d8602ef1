package io.relock.spring.boot;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import io.relock.testkit.RedisServer;

/**
 * A web application with Actuator and the Relock auto-configuration on a random port, and a
 * plain HTTP client for it. A request with the header {@code X-User} arrives authenticated as
 * that user (what a servlet container's or Spring Security's authentication leaves in
 * {@code HttpServletRequest.getUserPrincipal()}, where Boot's endpoints take the principal from).
 */
final class ActuatorApp implements AutoCloseable {

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private static final JsonMapper JSON = JsonMapper.builder().build();

    final ConfigurableApplicationContext context;
    private final int port;

    private ActuatorApp(ConfigurableApplicationContext context) {
        this.context = context;
        this.port = context.getEnvironment().getRequiredProperty("local.server.port", Integer.class);
    }

    /** Starts the application on {@code server} with the given extra properties. */
    static ActuatorApp start(RedisServer server, String... properties) {
        List<String> all = new ArrayList<>(List.of("spring.data.redis.url=" + server.uri(), "server.port=0",
                "server.address=127.0.0.1", "spring.main.banner-mode=off",
                "spring.datasource.url=jdbc:h2:mem:actuator", "management.endpoints.web.exposure.include=locks,health",
                "management.endpoint.health.show-details=always"));
        all.addAll(Arrays.asList(properties));
        return new ActuatorApp(new SpringApplicationBuilder(App.class).properties(all.toArray(String[]::new)).run());
    }

    <T> T bean(Class<T> type) {
        return context.getBean(type);
    }

    /** The path of one lock, each segment percent-encoded as a browser or curl would send it. */
    static String lockPath(String name) {
        List<String> segments = new ArrayList<>();
        for (String segment : name.split("/", -1)) {
            segments.add(URLEncoder.encode(segment, StandardCharsets.UTF_8).replace("+", "%20"));
        }
        return "/actuator/locks/" + String.join("/", segments);
    }

    Response get(String path) {
        return send(HttpRequest.newBuilder(uri(path)).GET(), null);
    }

    Response delete(String path, String user) {
        return send(HttpRequest.newBuilder(uri(path)).DELETE(), user);
    }

    private URI uri(String path) {
        return URI.create("http://127.0.0.1:" + port + path);
    }

    private static Response send(HttpRequest.Builder request, String user) {
        if (user != null) {
            request.header("X-User", user);
        }
        try {
            HttpResponse<String> response = HTTP.send(request.timeout(Duration.ofSeconds(30)).build(),
                    HttpResponse.BodyHandlers.ofString());
            return new Response(response.statusCode(), response.body());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() {
        context.close();
    }

    /** An HTTP answer. */
    record Response(int status, String body) {

        JsonNode json() {
            return JSON.readTree(body);
        }
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {

        @Bean
        Filter testAuthentication() {
            return (request, response, chain) -> {
                HttpServletRequest http = (HttpServletRequest) request;
                String user = http.getHeader("X-User");
                if (user == null) {
                    chain.doFilter(request, response);
                    return;
                }
                Principal principal = () -> user;
                chain.doFilter(new HttpServletRequestWrapper(http) {
                    @Override
                    public Principal getUserPrincipal() {
                        return principal;
                    }
                }, response);
            };
        }
    }
}
