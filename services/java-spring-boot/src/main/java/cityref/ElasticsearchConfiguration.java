package cityref;

import co.elastic.clients.elasticsearch.ElasticsearchAsyncClient;
import co.elastic.clients.json.jackson.Jackson3JsonpMapper;
import co.elastic.clients.transport.ElasticsearchTransport;
import co.elastic.clients.transport.rest_client.RestClientTransport;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import org.apache.http.HttpHost;
import org.apache.http.impl.nio.reactor.IOReactorConfig;
import org.apache.http.message.BasicHeader;
import org.elasticsearch.client.RestClient;
import org.elasticsearch.client.RestClientBuilder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The official Elasticsearch client as beans: the low-level {@link RestClient} (pool, timeouts,
 * credentials from {@link Config}), its transport with the Jackson 3 mapper Boot 4 uses, and the
 * async client the {@link CityRepository} awaits on each request's virtual thread. Spring closes
 * the transport and the low-level client on shutdown.
 */
@Configuration(proxyBeanMethods = false)
public class ElasticsearchConfiguration {
    /**
     * Pooled connections to Elasticsearch and permits for requests in flight, the spec's bound (the
     * low-level client's default is 10 connections per route); the same 64 as the other JVM services.
     */
    static final int MAX_CONNECTIONS = 64;

    @Bean
    RestClient elasticsearchRestClient(Config config) {
        int timeout = config.elasticsearchTimeoutMs();
        var url = config.elasticsearchUrl();
        int port = url.getPort() > 0 ? url.getPort() : ("https".equals(url.getScheme()) ? 443 : 80);
        RestClientBuilder builder = RestClient.builder(new HttpHost(url.getHost(), port, url.getScheme()));
        String path = url.getRawPath();
        if (path != null && !path.isEmpty() && !path.equals("/")) {
            builder.setPathPrefix(path.replaceAll("/+$", ""));
        }
        if (config.username() != null) {
            // Basic auth sent preemptively (a credentials provider would wait for a 401 first).
            String secret = config.username() + ":" + (config.password() == null ? "" : config.password());
            String token = Base64.getEncoder().encodeToString(secret.getBytes(StandardCharsets.UTF_8));
            builder.setDefaultHeaders(new BasicHeader[] {new BasicHeader("Authorization", "Basic " + token)});
        }
        // The deadline in CityRepository decides 504; the client's connect and socket timeouts only
        // back it up. No lease timeout: the wait for a pooled connection is inside that deadline.
        builder.setRequestConfigCallback(rc -> rc.setConnectTimeout(timeout).setSocketTimeout(timeout));
        // As the client's maintainers advise for a hot path without credentials: no auth cache and no
        // cookie store; the I/O reactor checks timeouts every 100 ms (default 1 s).
        builder.setHttpClientConfigCallback(hc -> hc.setMaxConnPerRoute(MAX_CONNECTIONS)
                .setMaxConnTotal(MAX_CONNECTIONS)
                .disableAuthCaching()
                .disableCookieManagement()
                .setDefaultIOReactorConfig(
                        IOReactorConfig.custom().setSelectInterval(100).build()));
        return builder.build();
    }

    @Bean
    ElasticsearchTransport elasticsearchTransport(RestClient restClient) {
        return new RestClientTransport(restClient, new Jackson3JsonpMapper());
    }

    @Bean
    ElasticsearchAsyncClient elasticsearchAsyncClient(ElasticsearchTransport transport) {
        return new ElasticsearchAsyncClient(transport);
    }
}
