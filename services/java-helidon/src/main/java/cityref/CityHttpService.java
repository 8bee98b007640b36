package cityref;

import io.helidon.http.Status;
import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;

/**
 * {@code /city/v1/get}: GET and HEAD look the city up (the query parsed by java-shared's {@link Query},
 * the checks in {@link CityService}), any other method is 405; registered on the routing as Helidon
 * SE's guides register a service.
 */
final class CityHttpService implements HttpService {
    private final CityService service;

    CityHttpService(CityService service) {
        this.service = service;
    }

    @Override
    public void routing(HttpRules rules) {
        Transport.route(rules, "/", this::getCity);
    }

    private void getCity(ServerRequest req, ServerResponse res) {
        Query query = Query.parse(req.prologue().query().rawValue());
        Transport.send(req, res, Status.OK_200, Transport.JSON, Transport.json(service.getCity(query)));
    }
}
