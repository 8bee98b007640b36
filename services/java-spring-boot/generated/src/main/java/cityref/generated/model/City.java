package cityref.generated.model;

import java.net.URI;
import java.util.Objects;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonCreator;
import org.jspecify.annotations.Nullable;
import java.time.OffsetDateTime;
import jakarta.validation.constraints.NotNull;


import java.util.*;
import jakarta.annotation.Generated;

/**
 * A city rendered in one language. Keys in this order.
 */

@Generated(value = "org.openapitools.codegen.languages.SpringCodegen", comments = "Generator version: 7.25.0")
public class City {

  private String countryIso;

  private Long id;

  private Boolean isFeatured;

  private String name;

  private String regionName;

  public City() {
    super();
  }

  /**
   * Constructor with only required parameters
   */
  public City(String countryIso, Long id, Boolean isFeatured, String name, String regionName) {
    this.countryIso = countryIso;
    this.id = id;
    this.isFeatured = isFeatured;
    this.name = name;
    this.regionName = regionName;
  }

  public City countryIso(String countryIso) {
    this.countryIso = countryIso;
    return this;
  }

  /**
   * ISO 3166-1 alpha-2 code of the city's country.
   * @return countryIso
   */
  @NotNull
  @JsonProperty("countryIso")
  public String getCountryIso() {
    return countryIso;
  }

  @JsonProperty("countryIso")
  public void setCountryIso(String countryIso) {
    this.countryIso = countryIso;
  }

  public City id(Long id) {
    this.id = id;
    return this;
  }

  /**
   * The city id.
   * minimum: 1
   * maximum: 9223372036854775807
   * @return id
   */
  @NotNull
  @JsonProperty("id")
  public Long getId() {
    return id;
  }

  @JsonProperty("id")
  public void setId(Long id) {
    this.id = id;
  }

  public City isFeatured(Boolean isFeatured) {
    this.isFeatured = isFeatured;
    return this;
  }

  /**
   * Whether the city is featured.
   * @return isFeatured
   */
  @NotNull
  @JsonProperty("isFeatured")
  public Boolean getIsFeatured() {
    return isFeatured;
  }

  @JsonProperty("isFeatured")
  public void setIsFeatured(Boolean isFeatured) {
    this.isFeatured = isFeatured;
  }

  public City name(String name) {
    this.name = name;
    return this;
  }

  /**
   * The city's name in the requested language.
   * @return name
   */
  @NotNull
  @JsonProperty("name")
  public String getName() {
    return name;
  }

  @JsonProperty("name")
  public void setName(String name) {
    this.name = name;
  }

  public City regionName(String regionName) {
    this.regionName = regionName;
    return this;
  }

  /**
   * The name of the city's region in the requested language.
   * @return regionName
   */
  @NotNull
  @JsonProperty("regionName")
  public String getRegionName() {
    return regionName;
  }

  @JsonProperty("regionName")
  public void setRegionName(String regionName) {
    this.regionName = regionName;
  }

  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    if (o == null || getClass() != o.getClass()) {
      return false;
    }
    City city = (City) o;
    return Objects.equals(this.countryIso, city.countryIso) &&
        Objects.equals(this.id, city.id) &&
        Objects.equals(this.isFeatured, city.isFeatured) &&
        Objects.equals(this.name, city.name) &&
        Objects.equals(this.regionName, city.regionName);
  }

  @Override
  public int hashCode() {
    return Objects.hash(countryIso, id, isFeatured, name, regionName);
  }

  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder();
    sb.append("class City {\n");
    sb.append("    countryIso: ").append(toIndentedString(countryIso)).append("\n");
    sb.append("    id: ").append(toIndentedString(id)).append("\n");
    sb.append("    isFeatured: ").append(toIndentedString(isFeatured)).append("\n");
    sb.append("    name: ").append(toIndentedString(name)).append("\n");
    sb.append("    regionName: ").append(toIndentedString(regionName)).append("\n");
    sb.append("}");
    return sb.toString();
  }

  /**
   * Convert the given object to string with each line indented by 4 spaces
   * (except the first line).
   */
  private String toIndentedString(@Nullable Object o) {
    return o == null ? "null" : o.toString().replace("\n", "\n    ");
  }
}

